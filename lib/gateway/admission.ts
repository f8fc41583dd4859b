import type { GatewayConfig, ModelInfo, TierInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { env } from '@/lib/env';
import { getDb } from '@/lib/db';
import { formatMoney, usdToPico } from '@/lib/billing/money';
import { pendingCharges } from '@/lib/billing/writer';
import { inc } from '@/lib/metrics';
import type { Rule, RuleState } from '@/lib/limits/types';
import type { Principal } from '@/lib/auth/principal';
import { balanceKey, getLimiter } from '@/lib/gateway/runtime';

// Admission: every limit layer (global, tier, model, endpoint) and the balance reservation
// in one limiter call, i.e. one Redis round trip.

export type Endpoint = 'chat' | 'embeddings' | 'anthropic';

export interface Admission {
  leaseId: string;
  userId: string;
  concurrencyKeys: string[];
  quotaKey?: string;
  reserved: bigint;
  headers: Record<string, string>;
  /** When the leases were last set to live LEASE_TTL_MS from then. */
  renewedAt: number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
export const LEASE_TTL_MS = env.LEASE_TTL_MS;

/** The account's effective limits: the tier table, with per-account overrides (VIP within its range). */
export function effectiveLimits(principal: Principal, cfg: GatewayConfig): TierInfo {
  const tier = cfg.tiers[principal.tier];
  const o = principal.limits;
  if (!o) return tier;
  const bounded = principal.tier === 'enterprise';
  return {
    ...tier,
    rpm: o.rpm ? (bounded ? o.rpm : Math.min(o.rpm, tier.maxRpm)) : tier.rpm,
    rph: o.rph ?? tier.rph,
    tokensPerDay: o.tokensPerDay === undefined ? tier.tokensPerDay : o.tokensPerDay,
    concurrency: o.concurrency ? (bounded ? o.concurrency : Math.min(o.concurrency, tier.maxConcurrency)) : tier.concurrency,
  };
}

// Rule lists depend only on the config, the cached principal, the model and the endpoint, so they
// are built once per combination (the config and principal objects are replaced when they change).
const ruleCache = new WeakMap<GatewayConfig, WeakMap<Principal, Map<string, Rule[]>>>();

export function rulesFor(principal: Principal, cfg: GatewayConfig, model: ModelInfo | null, endpoint: Endpoint): Rule[] {
  let byPrincipal = ruleCache.get(cfg);
  if (!byPrincipal) ruleCache.set(cfg, (byPrincipal = new WeakMap()));
  let byModel = byPrincipal.get(principal);
  if (!byModel) byPrincipal.set(principal, (byModel = new Map()));
  const key = `${endpoint}|${model?.name ?? ''}`;
  let rules = byModel.get(key);
  if (!rules) byModel.set(key, (rules = buildRules(principal, cfg, model, endpoint)));
  return rules;
}

/**
 * Largest "N per window" limit kept as an exact sliding log (one sorted-set entry per request in the
 * window). Above it, memory and Redis time per request would grow with the limit (a 1M-per-hour
 * account would hold up to a million entries), so the limit is enforced by GCRA with the same
 * rate and a burst of N: O(1) per key, and still never a fixed bucket that resets at a boundary.
 */
export const SLIDING_LOG_MAX = 10_000;

function windowRule(key: string, limit: number, windowMs: number, label: string, requests?: boolean): Rule {
  if (limit > SLIDING_LOG_MAX) return { kind: 'gcra', key: `${key}:gcra`, limit, windowMs, label, requests };
  return { kind: 'window', key, limit, windowMs, label, requests };
}

function buildRules(principal: Principal, cfg: GatewayConfig, model: ModelInfo | null, endpoint: Endpoint): Rule[] {
  const u = principal.userId;
  const rules: Rule[] = [
    { kind: 'gcra', key: 'gw:global', limit: cfg.limits.global_qps, windowMs: 1000, label: `global: ${cfg.limits.global_qps} requests per second` },
  ];
  if (endpoint === 'embeddings') {
    rules.push(
      windowRule(`gw:u:${u}:emb:rpm`, cfg.limits.embeddings_rpm, MINUTE, `embeddings: ${cfg.limits.embeddings_rpm} requests per minute`, true),
      { kind: 'concurrency', key: `gw:u:${u}:emb:conc`, limit: cfg.limits.embeddings_concurrency, label: `embeddings: ${cfg.limits.embeddings_concurrency} concurrent requests` },
    );
  } else {
    const t = effectiveLimits(principal, cfg);
    const name = `tier ${principal.tier}`;
    rules.push(
      windowRule(`gw:u:${u}:rpm`, t.rpm, MINUTE, `${name}: ${t.rpm} requests per minute`, true),
      windowRule(`gw:u:${u}:rph`, t.rph, HOUR, `${name}: ${t.rph} requests per hour`),
      { kind: 'concurrency', key: `gw:u:${u}:conc`, limit: t.concurrency, label: `${name}: ${t.concurrency} concurrent requests` },
    );
    if (t.tokensPerDay !== null) {
      rules.push({ kind: 'quota', key: `gw:u:${u}:tpd`, limit: t.tokensPerDay, windowMs: DAY, label: `${name}: ${t.tokensPerDay} tokens per day` });
    }
  }
  if (model) {
    // Per-model caps are shared by all free and pro accounts (the spec's per-model table).
    if (principal.tier === 'free' || principal.tier === 'pro') {
      if (model.rpm) rules.push(windowRule(`gw:m:${model.name}:rpm`, model.rpm, MINUTE, `model ${model.name}: ${model.rpm} requests per minute`));
      if (model.concurrency) rules.push({ kind: 'concurrency', key: `gw:m:${model.name}:conc`, limit: model.concurrency, label: `model ${model.name}: ${model.concurrency} concurrent requests` });
    }
    if (model.platformDailyRequests) {
      rules.push(windowRule(`gw:m:${model.name}:day`, model.platformDailyRequests, DAY, `model ${model.name}: ${model.platformDailyRequests} requests per day across the platform`));
    }
  }
  return rules;
}

const concurrencyKeyCache = new WeakMap<Rule[], string[]>();
function concurrencyKeysOf(rules: Rule[]): string[] {
  let keys = concurrencyKeyCache.get(rules);
  if (!keys) concurrencyKeyCache.set(rules, (keys = rules.filter((r) => r.kind === 'concurrency').map((r) => r.key)));
  return keys;
}

/** Go-style duration as OpenAI sends it: 1s, 6m0s, 12ms. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const totalS = Math.ceil(ms / 1000);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

export function rateLimitHeaders(states: RuleState[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const req = states.filter((s) => (s.rule.kind === 'window' || s.rule.kind === 'gcra') && s.rule.requests).sort((a, b) => a.remaining - b.remaining)[0];
  if (req) {
    headers['x-ratelimit-limit-requests'] = String(req.limit);
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, req.remaining));
    headers['x-ratelimit-reset-requests'] = goDuration(req.resetMs);
  }
  const tok = states.find((s) => s.rule.kind === 'quota');
  if (tok) {
    headers['x-ratelimit-limit-tokens'] = String(tok.limit);
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, tok.remaining));
    headers['x-ratelimit-reset-tokens'] = goDuration(tok.resetMs);
  }
  return headers;
}

async function loadBalance(userId: string): Promise<bigint> {
  try {
    const db = await getDb();
    const user = await db.user.findUnique({ where: { id: userId }, select: { balanceUsd: true } });
    return (user ? usdToPico(user.balanceUsd.toFixed(12)) : 0n) - pendingCharges(userId);
  } catch {
    throw new GatewayError('unavailable', 'The gateway cannot read this account balance right now. Please retry shortly.', { retryAfterMs: 2000 });
  }
}

export async function admit(
  principal: Principal,
  cfg: GatewayConfig,
  model: ModelInfo | null,
  endpoint: Endpoint,
  reserve: bigint,
  leaseId: string,
): Promise<Admission> {
  const limiter = getLimiter();
  const rules = rulesFor(principal, cfg, model, endpoint);
  const key = balanceKey(principal.userId);
  const input = { rules, leaseId, leaseTtlMs: LEASE_TTL_MS, reserve: { key, amount: reserve } };
  let result = await limiter.admit(input);
  // First request of this account since start-up (or since Redis lost it): one database read.
  // The limiter may switch backends in between, so try twice before calling it unavailable.
  for (let tries = 0; tries < 2 && !result.ok && result.reason === 'balance_unknown'; tries++) {
    await limiter.initBalance(key, await loadBalance(principal.userId));
    result = await limiter.admit(input);
  }
  if (!result.ok) {
    if (result.reason === 'limit') {
      inc('gateway_limiter_rejections_total', { limit: result.rule.kind, scope: result.rule.key.split(':')[1] ?? 'global' });
      const headers = rateLimitHeaders(result.states);
      // A long wait (the daily token quota, the hourly window) must not be slept on by SDKs that do
      // not cap Retry-After (@anthropic-ai/sdk): tell them not to retry at all.
      if (result.retryAfterMs > MINUTE) headers['x-should-retry'] = 'false';
      throw new GatewayError('rate_limit_exceeded', `Rate limit exceeded: ${result.rule.label}. Retry after ${Math.ceil(result.retryAfterMs / 1000)} s.`, {
        retryAfterMs: result.retryAfterMs,
        headers,
      });
    }
    if (result.reason === 'balance_unknown') {
      throw new GatewayError('unavailable', 'The gateway cannot read this account balance right now. Please retry shortly.', { retryAfterMs: 1000 });
    }
    const available = result.available;
    throw new GatewayError(
      'insufficient_balance',
      `Insufficient balance: this request may cost up to $${formatMoney(reserve, 6)} and the balance available is $${formatMoney(available, 6)}. Recharge in the dashboard.`,
    );
  }
  const admission: Admission = {
    leaseId,
    userId: principal.userId,
    concurrencyKeys: concurrencyKeysOf(rules),
    quotaKey: rules.find((r) => r.kind === 'quota')?.key,
    reserved: reserve,
    headers: rateLimitHeaders(result.states),
    renewedAt: Date.now(),
  };
  trackLeases(admission);
  return admission;
}

// Long streams keep their leases alive; a crashed instance's leases expire after LEASE_TTL_MS.
// One interval renews every admission whose leases are a third of their TTL old (so a lease is
// renewed at most two thirds into its life), instead of a timer per request.
const RENEW_EVERY_MS = LEASE_TTL_MS / 3;
const live = new Set<Admission>();
let renewer: NodeJS.Timeout | undefined;

function trackLeases(admission: Admission): void {
  live.add(admission);
  if (renewer) return;
  renewer = setInterval(renewLeases, RENEW_EVERY_MS);
  renewer.unref();
}

function untrackLeases(admission: Admission): void {
  live.delete(admission);
}

function renewLeases(): void {
  const now = Date.now();
  const limiter = getLimiter();
  for (const a of live) {
    if (now - a.renewedAt < RENEW_EVERY_MS) continue;
    a.renewedAt = now;
    void limiter.renew(a.concurrencyKeys, a.leaseId, LEASE_TTL_MS).catch(() => undefined);
  }
  if (live.size === 0) {
    clearInterval(renewer);
    renewer = undefined;
  }
}

/**
 * Frees the concurrency slots at once while the request still has work left (a stream whose client
 * went away is drained for its usage): the leases are cut to expire now. Shortening them (rather than
 * releasing) keeps the final release() routed to the limiter that admitted the request.
 */
export function expireLeases(admission: Admission): void {
  untrackLeases(admission);
  void getLimiter().renew(admission.concurrencyKeys, admission.leaseId, 1).catch(() => undefined);
}

/** Frees the leases, settles the reservation to the real cost and counts tokens for the daily quota. */
export async function release(admission: Admission, cost: bigint, tokens: number): Promise<void> {
  untrackLeases(admission);
  await getLimiter()
    .release({
      leaseId: admission.leaseId,
      concurrencyKeys: admission.concurrencyKeys,
      settle: { key: balanceKey(admission.userId), delta: admission.reserved - cost },
      usage: admission.quotaKey && tokens > 0 ? [{ key: admission.quotaKey, windowMs: DAY, amount: tokens }] : undefined,
    })
    .catch(() => undefined);
}
