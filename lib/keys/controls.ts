import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';
import { fieldError, GatewayError, type FieldError } from '@/lib/errors';
import type { MessageCode, MessageParams } from '@/lib/i18n/codes';
import { formatMoney } from '@/lib/format';
import { formatPico, parseDecimal, PICO } from '@/lib/money';
import { MAX_LIST } from '@/lib/schemas/keys';

// Per-key controls: what the /api/keys API accepts, how it is stored, and the checks the gateway
// makes with a key's cached copy (expiry, client address, model). Budgets and rate limits are
// enforced in the admission's limiter call (lib/keys/admission.ts).

// Most entries of a key's model or address list: the route schema's, which the key form checks too.
export { MAX_LIST };
/** Largest budget accepted, USD (far beyond any account's balance; keeps sums within Decimal(24,12)). */
const MAX_BUDGET_USD = 1_000_000_000n;

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

/** One bad field: the API's terse text (`"rpm": must be …`) and the form's words (lib/i18n/codes.ts). */
interface Problem {
  api: string;
  field: FieldError;
}

const problem = (field: string, api: string, code: MessageCode, params?: MessageParams): Problem => ({
  api: `"${field}": ${api}`,
  field: fieldError(field, code, params),
});

const FORM_ORDER = ['name', 'budget_usd', 'monthly_budget_usd', 'rpm', 'tpm', 'concurrency', 'allowed_ips', 'expires_at', 'models'];

/**
 * A 400 naming every bad field: `message` and `param` are the first one's (what API clients read),
 * `fields` all of them in words (what the key form shows beside each field).
 */
export function controlsError(unordered: Problem[]): GatewayError {
  // In the form's order, whichever check found them.
  const rank = (p: Problem) => FORM_ORDER.indexOf(p.field.field);
  const problems = [...unordered].sort((a, b) => rank(a) - rank(b));
  return new GatewayError('invalid_request', problems[0].api, {
    param: problems[0].field.field,
    messageCode: problems[0].field.message_code,
    params: problems[0].field.params,
    fields: problems.map((p) => p.field),
  });
}

/** USD as a JSON number or decimal string, > 0, at most 12 decimals; null clears. */
const money = z.union([z.number(), z.string()]).nullable();
const positiveInt = (max: number) => z.number().int().min(1).max(max).nullable();
const stringList = z.array(z.string().max(256)).max(MAX_LIST).nullable();
const fieldSchemas = {
  budget_usd: money,
  monthly_budget_usd: money,
  models: stringList,
  rpm: positiveInt(1_000_000),
  tpm: positiveInt(1_000_000_000),
  concurrency: positiveInt(100_000),
  allowed_ips: stringList,
  expires_at: z.string().max(64).nullable(),
} satisfies Record<ControlField, z.ZodType>;

function parseUsd(field: string, value: number | string | null, problems: Problem[]): bigint | null | undefined {
  if (value === null) return null;
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  // A number like 1e-7 prints in exponent form: not a decimal we accept (nor a sensible budget).
  if (!/^\d+(\.\d{1,12})?$/.test(text)) {
    const decimals = /^\d+\.\d{13,}$/.test(text);
    problems.push(
      problem(field, 'must be a positive amount in USD with at most 12 decimals, e.g. 25 or "12.50".', decimals ? 'field.budget_decimals' : 'field.budget'),
    );
    return undefined;
  }
  const pico = parseDecimal(text, 12);
  if (pico <= 0n) problems.push(problem(field, 'must be more than 0 (send null for no budget).', 'field.budget_positive'));
  else if (pico > MAX_BUDGET_USD * PICO) {
    const max = formatMoney(MAX_BUDGET_USD * PICO);
    problems.push(problem(field, `must be at most ${max}.`, 'field.budget_max', { max }));
  } else return pico;
  return undefined;
}

/**
 * Validates the controls in a create (POST) or edit (PATCH) body: only the fields present are
 * returned; null clears one. Any error is a 400 naming every bad field (`fields`), with `earlier`
 * (the caller's own, e.g. the name) first. `knownModel` decides which model names exist (the
 * operator's catalogue).
 */
export function parseKeyControls(
  body: Record<string, unknown>,
  knownModel: (name: string) => boolean,
  now = Date.now(),
  earlier: Problem[] = [],
): Partial<KeyControls> {
  const problems = [...earlier];
  const v: { [F in ControlField]?: z.infer<(typeof fieldSchemas)[F]> } = {};
  for (const field of Object.keys(fieldSchemas) as ControlField[]) {
    if (body[field] === undefined) continue;
    const parsed = fieldSchemas[field].safeParse(body[field]);
    if (parsed.success) (v as Record<string, unknown>)[field] = parsed.data;
    else problems.push(shapeProblem(field));
  }
  const out: Partial<KeyControls> = {};
  // undefined: the amount was refused (a problem is recorded); null clears the budget.
  const budget = v.budget_usd === undefined ? undefined : parseUsd('budget_usd', v.budget_usd, problems);
  if (budget !== undefined) out.budgetPico = budget;
  const monthly = v.monthly_budget_usd === undefined ? undefined : parseUsd('monthly_budget_usd', v.monthly_budget_usd, problems);
  if (monthly !== undefined) out.monthlyBudgetPico = monthly;
  if (v.models !== undefined) {
    const models = [...new Set((v.models ?? []).map((m) => m.trim()))];
    const unknown = models.find((m) => !knownModel(m));
    if (unknown !== undefined) {
      const model = unknown.slice(0, 64);
      problems.push(problem('models', `unknown model "${model}". GET /v1/models lists the model names.`, 'field.model_unknown', { model }));
    }
    out.models = models;
  }
  if (v.rpm !== undefined) out.rpm = v.rpm;
  if (v.tpm !== undefined) out.tpm = v.tpm;
  if (v.concurrency !== undefined) out.concurrency = v.concurrency;
  if (v.allowed_ips !== undefined) {
    const ips = [...new Set((v.allowed_ips ?? []).map((s) => s.trim()))];
    const bad = ips.find((s) => !parseCidr(s));
    if (bad !== undefined) {
      const value = bad.slice(0, 64);
      problems.push(
        problem('allowed_ips', `"${value}" is not an IPv4 or IPv6 address or CIDR range (e.g. 203.0.113.0/24, 2001:db8::/32).`, 'field.ip_invalid', { value }),
      );
    }
    out.allowedIps = ips;
  }
  if (v.expires_at !== undefined) {
    if (v.expires_at === null) out.expiresAt = null;
    else {
      // ISO-8601 with a time zone: a bare local time would mean something else on every server.
      const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;
      const at = iso.test(v.expires_at) ? new Date(v.expires_at) : new Date(NaN);
      if (Number.isNaN(at.getTime()))
        problems.push(problem('expires_at', 'must be an ISO-8601 date-time with a time zone, e.g. 2027-01-31T23:59:59Z.', 'field.expires'));
      else if (at.getTime() <= now) problems.push(problem('expires_at', 'must be in the future (revoke the key to stop it now).', 'field.expires_past'));
      else out.expiresAt = at;
    }
  }
  if (problems.length > 0) throw controlsError(problems);
  return out;
}

/** The name of a key, 1 to 64 characters once trimmed: the problem when it is not. */
export function nameProblem(name: string): Problem | null {
  return !name || name.length > 64 ? problem('name', 'must be 1 to 64 characters.', 'field.name') : null;
}

function shapeProblem(field: ControlField): Problem {
  switch (field) {
    case 'budget_usd':
    case 'monthly_budget_usd':
      return problem(field, 'must be a positive amount in USD (a number or decimal string), or null.', 'field.budget');
    case 'models':
      return problem(field, `must be a list of at most ${MAX_LIST} model names, or null.`, 'field.models', { max: MAX_LIST });
    case 'rpm':
      return problem(field, 'must be a whole number of requests per minute from 1 to 1000000, or null.', 'field.rpm');
    case 'tpm':
      return problem(field, 'must be a whole number of tokens per minute (input + output) from 1 to 1000000000, or null.', 'field.tpm');
    case 'concurrency':
      return problem(field, 'must be a whole number of concurrent requests from 1 to 100000, or null.', 'field.concurrency');
    case 'allowed_ips':
      return problem(field, `must be a list of at most ${MAX_LIST} IPv4/IPv6 addresses or CIDR ranges, or null.`, 'field.ips', { max: MAX_LIST });
    case 'expires_at':
      return problem(field, 'must be an ISO-8601 date-time, or null.', 'field.expires');
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
