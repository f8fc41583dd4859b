import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import { GatewayError } from '@/lib/errors';
import { formatMoney } from '@/lib/format';
import { formatPico, parseDecimal } from '@/lib/billing/money';

// Per-key controls: what the /api/keys API accepts, how it is stored, and the checks the gateway
// makes with a key's cached copy (expiry, client address, model). Budgets and rate limits are
// enforced in the admission's limiter call (lib/keys/admission.ts).

/** Most entries of a key's model or address list. */
export const MAX_LIST = 100;
/** Largest budget accepted, USD (far beyond any account's balance; keeps sums within Decimal(24,12)). */
const MAX_BUDGET_USD = 1_000_000_000n;
const PICO = 1_000_000_000_000n;

/** One CIDR range as given (a bare address is a single-address range). */
export interface Cidr {
  family: 'ipv4' | 'ipv6';
  address: string;
  prefix: number;
}

/** Parses "10.0.0.0/8", "2001:db8::/32", "192.0.2.7" (= /32) or "::1" (= /128); null when invalid. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const address = (slash === -1 ? text : text.slice(0, slash)).trim();
  const prefixText = slash === -1 ? null : text.slice(slash + 1).trim();
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
  if (!family) return null;
  const max = family === 'ipv4' ? 32 : 128;
  if (prefixText === null) return { family, address, prefix: max };
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix <= max ? { family, address, prefix } : null;
}

/**
 * A client address as the checks compare it: an IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, how a
 * dual-stack socket reports IPv4 clients) is its IPv4 address. Null when it is not an address.
 */
export function normaliseIp(ip: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  let a = ip.trim();
  // A zone (fe80::1%eth0) never matches a configured range: compared without it.
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(a);
  if (mapped && isIPv4(mapped[1])) return { address: mapped[1], family: 'ipv4' };
  if (isIPv4(a)) return { address: a, family: 'ipv4' };
  if (isIPv6(a)) return { address: a, family: 'ipv6' };
  return null;
}

/** The matcher of a key's ranges: built once per cached key. */
export function ipMatcher(cidrs: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const text of cidrs) {
    const c = parseCidr(text);
    if (c) list.addSubnet(c.address, c.prefix, c.family);
  }
  return (ip) => {
    const n = normaliseIp(ip);
    return n !== null && list.check(n.address, n.family);
  };
}

/** The controls as stored on the key row (money in pico-USD). */
export interface KeyControls {
  budgetPico: bigint | null;
  monthlyBudgetPico: bigint | null;
  models: string[];
  rpm: number | null;
  /** Tokens per minute (input + output). */
  tpm: number | null;
  concurrency: number | null;
  allowedIps: string[];
  expiresAt: Date | null;
}

export type ControlField = 'budget_usd' | 'monthly_budget_usd' | 'models' | 'rpm' | 'tpm' | 'concurrency' | 'allowed_ips' | 'expires_at';

function invalid(field: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `"${field}": ${message}`, { param: field });
}

/** USD as a JSON number or decimal string, > 0, at most 12 decimals; null clears. */
const money = z.union([z.number(), z.string()]).nullable();
const positiveInt = (max: number) => z.number().int().min(1).max(max).nullable();
const stringList = z.array(z.string().max(256)).max(MAX_LIST).nullable();
const schema = z
  .object({
    budget_usd: money,
    monthly_budget_usd: money,
    models: stringList,
    rpm: positiveInt(1_000_000),
    tpm: positiveInt(1_000_000_000),
    concurrency: positiveInt(100_000),
    allowed_ips: stringList,
    expires_at: z.string().max(64).nullable(),
  })
  .partial();

function parseUsd(field: string, value: number | string | null): bigint | null {
  if (value === null) return null;
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  // A number like 1e-7 prints in exponent form: not a decimal we accept (nor a sensible budget).
  if (!/^\d+(\.\d{1,12})?$/.test(text)) throw invalid(field, 'must be a positive amount in USD with at most 12 decimals, e.g. 25 or "12.50".');
  const pico = parseDecimal(text, 12);
  if (pico <= 0n) throw invalid(field, 'must be more than 0 (send null for no budget).');
  if (pico > MAX_BUDGET_USD * PICO) throw invalid(field, `must be at most ${formatMoney(MAX_BUDGET_USD * PICO)}.`);
  return pico;
}

/**
 * Validates the controls in a create (POST) or edit (PATCH) body: only the fields present are
 * returned; null clears one. Any error is a 400 naming the field. `knownModel` decides which model
 * names exist (the operator's catalogue).
 */
export function parseKeyControls(body: Record<string, unknown>, knownModel: (name: string) => boolean, now = Date.now()): Partial<KeyControls> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue.path[0] ?? 'body');
    throw invalid(field, describe(field as ControlField));
  }
  const v = parsed.data;
  const out: Partial<KeyControls> = {};
  if (v.budget_usd !== undefined) out.budgetPico = parseUsd('budget_usd', v.budget_usd);
  if (v.monthly_budget_usd !== undefined) out.monthlyBudgetPico = parseUsd('monthly_budget_usd', v.monthly_budget_usd);
  if (v.models !== undefined) {
    const models = [...new Set((v.models ?? []).map((m) => m.trim()))];
    for (const m of models) {
      if (!knownModel(m)) throw invalid('models', `unknown model "${m.slice(0, 64)}". GET /v1/models lists the model names.`);
    }
    out.models = models;
  }
  if (v.rpm !== undefined) out.rpm = v.rpm;
  if (v.tpm !== undefined) out.tpm = v.tpm;
  if (v.concurrency !== undefined) out.concurrency = v.concurrency;
  if (v.allowed_ips !== undefined) {
    const ips = [...new Set((v.allowed_ips ?? []).map((s) => s.trim()))];
    for (const s of ips) {
      if (!parseCidr(s)) throw invalid('allowed_ips', `"${s.slice(0, 64)}" is not an IPv4 or IPv6 address or CIDR range (e.g. 203.0.113.0/24, 2001:db8::/32).`);
    }
    out.allowedIps = ips;
  }
  if (v.expires_at !== undefined) {
    if (v.expires_at === null) out.expiresAt = null;
    else {
      // ISO-8601 with a time zone: a bare local time would mean something else on every server.
      const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;
      const at = iso.test(v.expires_at) ? new Date(v.expires_at) : new Date(NaN);
      if (Number.isNaN(at.getTime())) throw invalid('expires_at', 'must be an ISO-8601 date-time with a time zone, e.g. 2027-01-31T23:59:59Z.');
      if (at.getTime() <= now) throw invalid('expires_at', 'must be in the future (revoke the key to stop it now).');
      out.expiresAt = at;
    }
  }
  return out;
}

function describe(field: ControlField | string): string {
  switch (field) {
    case 'budget_usd':
    case 'monthly_budget_usd':
      return 'must be a positive amount in USD (a number or decimal string), or null.';
    case 'models':
      return `must be a list of at most ${MAX_LIST} model names, or null.`;
    case 'rpm':
      return 'must be a whole number of requests per minute from 1 to 1000000, or null.';
    case 'tpm':
      return 'must be a whole number of tokens per minute (input + output) from 1 to 1000000000, or null.';
    case 'concurrency':
      return 'must be a whole number of concurrent requests from 1 to 100000, or null.';
    case 'allowed_ips':
      return `must be a list of at most ${MAX_LIST} IPv4/IPv6 addresses or CIDR ranges, or null.`;
    case 'expires_at':
      return 'must be an ISO-8601 date-time, or null.';
    default:
      return 'is invalid.';
  }
}

/** The controls as the API returns them (money as exact decimal text). */
export function publicControls(c: KeyControls) {
  return {
    budget_usd: c.budgetPico === null ? null : formatPico(c.budgetPico),
    monthly_budget_usd: c.monthlyBudgetPico === null ? null : formatPico(c.monthlyBudgetPico),
    models: c.models,
    rpm: c.rpm,
    tpm: c.tpm,
    concurrency: c.concurrency,
    allowed_ips: c.allowedIps,
    expires_at: c.expiresAt?.toISOString() ?? null,
  };
}

/** The calendar month (UTC) of `ms`, as "2026-11", and its first instant. */
export function monthOf(ms: number): { label: string; start: number } {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return { label: `${y}-${String(m + 1).padStart(2, '0')}`, start: Date.UTC(y, m, 1) };
}
