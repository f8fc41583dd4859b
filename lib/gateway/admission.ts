import type { GatewayConfig, ModelInfo, TierInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { env } from '@/lib/env';
import { formatMoney } from '@/lib/billing/money';
import { loadAccountBalance, type AccountBalanceSnapshot } from '@/lib/billing/queries';
import { inc } from '@/lib/metrics';
import type { AdmitResult, Rule, RuleState } from '@/lib/limits/types';
import { accountKey, keyScope, modelKey } from '@/lib/limits/keys';
import { forgetPrincipal, type Principal } from '@/lib/auth/principal';
import { balanceKey, getLimiter } from '@/lib/gateway/runtime';
import { keyBudgetError, keyBudgets, keyRules, loadKeyBudget, mayOutrunAdmission, refreshedPrincipal } from '@/lib/keys/admission';

// Admission: every limit layer (global, tier, model, endpoint) and the balance reservation
// in one limiter call, i.e. one Redis round trip.

export type Endpoint = 'chat' | 'embeddings' | 'anthropic' | 'count_tokens';

export interface Admission {
  leaseId: string;
  userId: string;
  concurrencyKeys: string[];
  quotaKey?: string;
  reserved: bigint;
  /** The key's budget counters the reservation was also taken against (lib/keys/admission.ts). */
  budgetKeys?: string[];
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

/** A window rule: fixed sub-buckets whatever the limit (lib/limits), exact in any span of windowMs. */
function windowRule(key: string, limit: number, windowMs: number, label: string, requests?: boolean): Rule {
  return { kind: 'window', key, limit, windowMs, label, requests };
}

function buildRules(principal: Principal, cfg: GatewayConfig, model: ModelInfo | null, endpoint: Endpoint): Rule[] {
  const u = principal.userId;
  const rules: Rule[] = [
    { kind: 'gcra', key: 'gw:global', limit: cfg.limits.global_qps, windowMs: 1000, label: `global: ${cfg.limits.global_qps} requests per second` },
  ];
  if (endpoint === 'count_tokens') {
    // The mirror's token counting calls the upstream on the operator's key without charge: its own
    // request rate and concurrency, at the tier's figures, so that it is neither free of limits nor
    // eats into the account's budget for messages.
    const t = effectiveLimits(principal, cfg);
    rules.push(windowRule(accountKey(u, 'ct:rpm'), t.rpm, MINUTE, `count_tokens: ${t.rpm} requests per minute`, true), {
      kind: 'concurrency',
      key: accountKey(u, 'ct:conc'),
      limit: t.concurrency,
      label: `count_tokens: ${t.concurrency} concurrent requests`,
    });
  } else if (endpoint === 'embeddings') {
    rules.push(windowRule(accountKey(u, 'emb:rpm'), cfg.limits.embeddings_rpm, MINUTE, `embeddings: ${cfg.limits.embeddings_rpm} requests per minute`, true), {
      kind: 'concurrency',
      key: accountKey(u, 'emb:conc'),
      limit: cfg.limits.embeddings_concurrency,
      label: `embeddings: ${cfg.limits.embeddings_concurrency} concurrent requests`,
    });
  } else {
    const t = effectiveLimits(principal, cfg);
    const name = `tier ${principal.tier}`;
    rules.push(
      windowRule(accountKey(u, 'rpm'), t.rpm, MINUTE, `${name}: ${t.rpm} requests per minute`, true),
      windowRule(accountKey(u, 'rph'), t.rph, HOUR, `${name}: ${t.rph} requests per hour`),
      { kind: 'concurrency', key: accountKey(u, 'conc'), limit: t.concurrency, label: `${name}: ${t.concurrency} concurrent requests` },
    );
    if (t.tokensPerDay !== null) {
      rules.push({ kind: 'quota', key: accountKey(u, 'tpd'), limit: t.tokensPerDay, windowMs: DAY, label: `${name}: ${t.tokensPerDay} tokens per day` });
    }
  }
  rules.push(...keyRules(principal)); // per-key controls (issue 29)
  if (model) {
    // Per-model caps are shared by all free and pro accounts (the spec's per-model table).
    if (principal.tier === 'free' || principal.tier === 'pro') {
      if (model.rpm) rules.push(windowRule(modelKey(model.name, 'rpm'), model.rpm, MINUTE, `model ${model.name}: ${model.rpm} requests per minute`));
      if (model.concurrency)
        rules.push({
          kind: 'concurrency',
          key: modelKey(model.name, 'conc'),
          limit: model.concurrency,
          label: `model ${model.name}: ${model.concurrency} concurrent requests`,
        });
    }
    if (model.platformDailyRequests) {
      rules.push(
        windowRule(
          modelKey(model.name, 'day'),
          model.platformDailyRequests,
          DAY,
          `model ${model.name}: ${model.platformDailyRequests} requests per day across the platform`,
        ),
      );
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

/** The balance load (lib/billing/queries.ts), its failure answered as a retryable 503. */
async function loadBalance(userId: string): Promise<AccountBalanceSnapshot> {
  try {
    return await loadAccountBalance(userId);
  } catch {
    throw new GatewayError('unavailable', 'The gateway cannot read this account balance right now. Please retry shortly.', { retryAfterMs: 2000 });
  }
}

/**
 * A deny marker exists (lib/events.ts): suspended or revoked since this instance cached the caller,
 * and its invalidation message is still on its way. Refused now; reloaded from the database next time.
 */
function refuseDenied(principal: Principal, index: number): GatewayError {
  forgetPrincipal(principal.keyHash);
  if (index === 0) return new GatewayError('account_suspended', 'This account is suspended.');
  if (index === 2) return new GatewayError('unavailable', 'This API key was just edited. Please retry.', { retryAfterMs: 1000 });
  return new GatewayError('invalid_api_key', 'Invalid or revoked API key.');
}

/**
 * For requests that admit nothing (model lists): the deny markers hold there too. Answers the
 * caller as it is now (reloaded when its key was edited since it was cached; `ip` is checked then).
 */
export async function checkDenied(principal: Principal, ip = ''): Promise<Principal> {
  let index: number;
  try {
    index = await getLimiter().denied(principal.denyKeys);
  } catch {
    return principal; // Redis unreachable: the cached copy and its TTL decide, as for every other check
  }
  if (index === 2) return refreshedPrincipal(principal, null, ip);
  if (index >= 0) throw refuseDenied(principal, index);
  return principal;
}

/** One room reading per account, endpoint and model (the rule set); see startAdmission. */
function headroomKey(userId: string, model: ModelInfo | null, endpoint: Endpoint): string {
  return `${userId}|${endpoint}|${model?.name ?? ''}`;
}

/** What one request asks the limiter for: its caller, rule set, reservation and lease. */
export interface AdmissionRequest {
  principal: Principal;
  cfg: GatewayConfig;
  model: ModelInfo | null;
  endpoint: Endpoint;
  /** Balance reservation, pico-USD. */
  reserve: bigint;
  leaseId: string;
  /** The client address the key's ranges are checked against, should the key be reloaded after an edit. */
  ip?: string;
}

/** The 429 for a limit that refused (counted in /metrics under `scope`). */
function limitError(result: Extract<AdmitResult, { reason: 'limit' }>, scope: string): GatewayError {
  inc('gateway_limiter_rejections_total', { limit: result.rule.kind, scope });
  const headers = rateLimitHeaders(result.states);
  // A long wait (the daily token quota, the hourly window) must not be slept on by SDKs that do
  // not cap Retry-After (@anthropic-ai/sdk): tell them not to retry at all.
  if (result.retryAfterMs > MINUTE) headers['x-should-retry'] = 'false';
  return new GatewayError('rate_limit_exceeded', `Rate limit exceeded: ${result.rule.label}. Retry after ${Math.ceil(result.retryAfterMs / 1000)} s.`, {
    retryAfterMs: result.retryAfterMs,
    headers,
  });
}

/** Admits in the limiter (one round trip); `roomKey`: where to keep the room reading, if anywhere. */
async function admit(request: AdmissionRequest, roomKey: string | undefined, urgent = false, refreshed = false): Promise<Admission> {
  const { principal, cfg, model, endpoint, reserve, leaseId } = request;
  const limiter = getLimiter();
  const rules = rulesFor(principal, cfg, model, endpoint);
  const key = balanceKey(principal.userId);
  const budgets = keyBudgets(principal);
  const input = {
    rules,
    leaseId,
    leaseTtlMs: LEASE_TTL_MS,
    reserve: { key, amount: reserve },
    budgets,
    denyKeys: principal.denyKeys,
    urgent: sendNow(urgent, 'admit'),
  };
  let result: AdmitResult;
  admitting++;
  try {
    result = await limiter.admit(input);
    // First request of this account since start-up (or since Redis lost it): one database read.
    // The limiter may switch backends in between, so try twice before calling it unavailable.
    for (let tries = 0; tries < 2 + (budgets?.length ?? 0) && !result.ok && result.reason === 'balance_unknown'; tries++) {
      if (result.index && budgets)
        await loadKeyBudget(limiter, principal, budgets[result.index - 1]); // a key budget's counter
      else {
        const loaded = await loadBalance(principal.userId);
        await limiter.initBalance(key, loaded.amount, loaded.credits, loaded.included);
      }
      result = await limiter.admit(input);
    }
  } finally {
    admitting--;
  }
  if (!result.ok) {
    if (roomKey) headroom.delete(roomKey);
    if (result.reason === 'limit') throw limitError(result, keyScope(result.rule.key));
    // The key was edited since it was cached here (index 2, lib/events.ts): admitted under its new controls.
    if (result.reason === 'denied' && result.index === 2 && !refreshed) {
      return admit({ ...request, principal: await refreshedPrincipal(principal, model?.name ?? null, request.ip ?? '') }, roomKey, urgent, true);
    }
    if (result.reason === 'denied') throw refuseDenied(principal, result.index);
    if (result.reason === 'balance_unknown') {
      throw new GatewayError('unavailable', 'The gateway cannot read this account balance right now. Please retry shortly.', { retryAfterMs: 1000 });
    }
    if (result.index && budgets) throw keyBudgetError(principal, budgets[result.index - 1], result.available, reserve);
    const available = result.available;
    throw new GatewayError(
      'insufficient_balance',
      `Insufficient balance: this request may cost up to $${formatMoney(reserve, 6)} and the balance available is $${formatMoney(available, 6)}. Recharge in the dashboard.`,
    );
  }
  if (roomKey) noteHeadroom(roomKey, result.states, result.balance, reserve);
  const admission: Admission = {
    leaseId,
    userId: principal.userId,
    concurrencyKeys: concurrencyKeysOf(rules),
    quotaKey: rules.find((r) => r.kind === 'quota')?.key,
    reserved: reserve,
    budgetKeys: budgets?.map((b) => b.key),
    headers: rateLimitHeaders(result.states),
    renewedAt: Date.now(),
  };
  trackLeases(admission);
  return admission;
}

// ---------------------------------------------------------------------------------------------
// Speculative dispatch. The admission is one Redis round trip; on an idle path every hop costs a
// process wake-up, so waiting for it before calling the upstream adds the most to time to first
// byte. When the previous admission of the same account and rule set (at most SPECULATE_MAX_AGE_MS
// ago) left ample room on every limit and on the balance, the upstream call goes out at once and
// the admission runs alongside it. Nothing reaches the client, and nothing is billed, until the
// admission has succeeded; if it is refused after all (another instance used up the room in the
// meantime), the upstream call is cancelled and the client gets the refusal (429/402) as usual.
// Limits stay exact: every request is still admitted in Redis before it is answered. What
// speculation can cost is an upstream call cancelled early, for a request the room check allowed
// and Redis then refused; the margins below make that rare, and it never happens to an account
// near a limit or low on balance (those wait for the admission as before).
// ---------------------------------------------------------------------------------------------

/** Fraction of every limit that must still be free for a request to skip waiting for admission. */
const SPECULATE_MARGIN = 0.1;
/** The balance left must cover this many times the request's reservation. */
const SPECULATE_BALANCE_FACTOR = 10n;
/** A room reading older than this is not trusted. */
const SPECULATE_MAX_AGE_MS = 10_000;

interface Headroom {
  at: number;
  /** Requests every limit could still take beyond its margin when last admitted. */
  requests: number;
  /** Balance left after the last admission's reservation, in pico-USD. */
  balance: bigint;
  /** Speculative admissions sent since and not answered yet (they use the room above). */
  pending: number;
  pendingReserve: bigint;
}

// One reading per account, endpoint and model (the rule set), refreshed by every admission.
const headroom = new Map<string, Headroom>();
const MAX_HEADROOM_ENTRIES = 100_000;

function noteHeadroom(key: string, states: RuleState[], balance: bigint | undefined, reserve: bigint): void {
  let requests = Infinity;
  for (const s of states) {
    const margin = Math.ceil(s.limit * SPECULATE_MARGIN);
    // The token quota counts tokens, not requests: enough room left, or none at all.
    const room = s.rule.kind === 'quota' ? (s.remaining > margin ? Infinity : 0) : s.remaining - margin;
    if (room < requests) requests = room;
  }
  if (balance === undefined && reserve > 0n) {
    headroom.delete(key);
    return;
  }
  const h = headroom.get(key);
  if (h) {
    h.at = Date.now();
    h.requests = requests;
    h.balance = balance ?? 0n;
    return;
  }
  if (headroom.size >= MAX_HEADROOM_ENTRIES) headroom.clear();
  headroom.set(key, { at: Date.now(), requests, balance: balance ?? 0n, pending: 0, pendingReserve: 0n });
}

function maySpeculate(h: Headroom | undefined, reserve: bigint): h is Headroom {
  if (!h || Date.now() - h.at > SPECULATE_MAX_AGE_MS) return false;
  if (h.requests - h.pending < 1) return false;
  return h.balance - h.pendingReserve >= reserve * SPECULATE_BALANCE_FACTOR;
}

/** An admission on its way, and whether the upstream may be called before it is answered. */
export interface PendingAdmission {
  admission: Promise<Admission>;
  speculative: boolean;
}

/**
 * Fewer requests than this in progress on this instance (admitted and not yet released, or being
 * admitted) make it quiet: there, by default, non-streaming requests speculate too.
 */
const SPECULATE_QUIET_BELOW = 4;
/** Admissions on their way to the limiter (`live` holds the admitted ones). */
let admitting = 0;

/**
 * True while this instance is quiet (SPECULATE_QUIET_BELOW). Only then does a limiter call that
 * a client is waiting for go to Redis at once (`urgent`); on a busy instance it travels with the
 * event-loop turn's batch, which leaves in the same turn anyway: an urgent write costs a socket
 * write of its own (~0.1 ms of CPU on these VMs), which at 500 concurrent streams was a seventh of
 * the gateway's CPU (bench/NOTES.md).
 */
function quiet(): boolean {
  return live.size + admitting < SPECULATE_QUIET_BELOW;
}

/** Whether a limiter call that asks to be urgent is sent at once: only on a quiet instance (counted). */
function sendNow(urgent: boolean, call: 'admit' | 'release'): boolean {
  if (!urgent || !quiet()) return false;
  inc('gateway_limiter_urgent_total', { call });
  return true;
}

/**
 * Starts the admission of a request. `speculative` says the caller may go upstream at once (see
 * above); otherwise it must await `admission` first. Streams speculate: their time to first byte
 * is what the saved round trip shortens. A non-streaming request speculates by default only while
 * this instance is quiet (SPECULATE_QUIET_BELOW): there the saved round trip is most of what the
 * gateway adds to a call (c=1 in the benchmark: p50 -0.13 ms, p99 -0.85 ms with every request
 * speculating), while under load the overlap costs CPU per request (more event-loop turns, smaller
 * limiter batches: +10-15 % on a short non-streaming call at c=50 in the benchmark, +25-50 % on
 * earlier hosts). SPECULATIVE_ADMISSION=all speculates under load too, `streams` for streams only,
 * `off` never. Either way the request is answered only once `admission` has resolved, and a
 * rejection of it is the request's answer.
 */
export function startAdmission(request: AdmissionRequest, stream: boolean): PendingAdmission {
  const { principal, model, endpoint, reserve } = request;
  const mode = env.SPECULATIVE_ADMISSION;
  // With speculation off no reading is kept; otherwise every admission of the account refreshes
  // the reading that its next request may use.
  const key = mode === 'off' ? undefined : headroomKey(principal.userId, model, endpoint);
  const eligible = stream || mode === 'all' || (mode === 'auto' && quiet());
  const h = key && eligible ? headroom.get(key) : undefined;
  const speculative = maySpeculate(h, reserve) && mayOutrunAdmission(principal); // lib/keys: not with a key budget
  // A speculative admission asks to be sent at once (urgent, on a quiet instance): its reply gates the first byte.
  const admission = admit(request, key, speculative);
  if (!speculative) return { admission, speculative: false };
  h.pending++;
  h.pendingReserve += reserve;
  const settled = () => {
    h.pending--;
    h.pendingReserve -= reserve;
  };
  admission.then(settled, (err: unknown) => {
    settled();
    if (err instanceof GatewayError && err.status !== 503) inc('gateway_speculation_refused_total', { code: err.code });
  });
  inc('gateway_speculative_admissions_total', {});
  return { admission, speculative: true };
}

// Long streams keep their leases alive (concurrency slots and the balance reservation); a crashed
// instance's leases expire after LEASE_TTL_MS, and its reservations then return to the balance.
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
    // The balance reservation is a lease too: renewed with the concurrency leases.
    void limiter.renew(a.concurrencyKeys, a.leaseId, LEASE_TTL_MS, { key: balanceKey(a.userId), amount: a.reserved }).catch(() => undefined);
    for (const k of a.budgetKeys ?? []) void limiter.renew([], a.leaseId, LEASE_TTL_MS, { key: k, amount: a.reserved }).catch(() => undefined);
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
  void getLimiter()
    .renew(admission.concurrencyKeys, admission.leaseId, 1)
    .catch(() => undefined);
}

/**
 * Frees the leases, settles the reservation to the real cost and counts tokens for the daily quota.
 * `urgent` sends it at once rather than with the event-loop turn's batch (ReleaseInput.urgent),
 * if this instance is quiet (see quiet()).
 */
export async function release(admission: Admission, cost: bigint, tokens: number, urgent = false): Promise<void> {
  urgent = sendNow(urgent, 'release');
  untrackLeases(admission);
  await getLimiter()
    .release({
      leaseId: admission.leaseId,
      concurrencyKeys: admission.concurrencyKeys,
      // With `reserved`: the reservation lease is settled exactly once, whatever became of it.
      settle: { key: balanceKey(admission.userId), delta: admission.reserved - cost, reserved: admission.reserved },
      budgets: admission.budgetKeys?.map((key) => ({ key, delta: admission.reserved - cost, reserved: admission.reserved })),
      usage: admission.quotaKey && tokens > 0 ? [{ key: admission.quotaKey, windowMs: DAY, amount: tokens }] : undefined,
      urgent,
    })
    .catch(() => undefined);
}

// Requests refused before their admission (malformed body, unknown model) are counted against the
// account's request rate with the request-rate rule alone: no reservation, no lease.
const rateRuleCache = new WeakMap<Rule[], Rule[]>();

/**
 * Counts a request refused before admission against the account's request rate. Answers the 429
 * to send instead when the account is over it; null otherwise (or when the limiter is unreachable:
 * the refusal stands either way).
 */
export async function countRefused(principal: Principal, cfg: GatewayConfig, endpoint: Endpoint, leaseId: string): Promise<GatewayError | null> {
  const all = rulesFor(principal, cfg, null, endpoint);
  let rules = rateRuleCache.get(all);
  if (!rules) rateRuleCache.set(all, (rules = all.filter((r) => (r.kind === 'window' || r.kind === 'gcra') && r.requests)));
  if (rules.length === 0) return null;
  try {
    const result = await getLimiter().admit({ rules, leaseId, leaseTtlMs: LEASE_TTL_MS });
    return result.ok || result.reason !== 'limit' ? null : limitError(result, 'refused');
  } catch {
    return null;
  }
}
