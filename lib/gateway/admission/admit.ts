// Admission: every limit layer (global, tier, model, endpoint) and the balance reservation in one
// limiter call, i.e. one Redis round trip; speculative when the account's last admission left
// ample room (speculation.ts).
import type { GatewayConfig, ModelInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { env } from '@/lib/env';
import { formatMoney } from '@/lib/format';
import { codedError } from '@/lib/errors';
import { formatPico } from '@/lib/money';
import { formatAllowance, planFor, type PlanAdmission } from '@/lib/plans/windows';
import { windowUse } from '@/lib/plans/subscriptions';
import { loadAccountBalance, type AccountBalanceSnapshot } from '@/lib/billing/queries';
import { inc } from '@/lib/metrics';
import type { AdmitResult } from '@/lib/limits/types';
import { keyScope } from '@/lib/limits/keys';
import type { Principal } from '@/lib/auth/principal';
import { getLimiter } from '@/lib/limits/runtime';
import { balanceKey } from '@/lib/limits/keys';
import { keyBudgetError, keyBudgets, Unaffordable, loadKeyBudget, mayOutrunAdmission, refreshedPrincipal } from '@/lib/auth/admission';
import { concurrencyKeysOf, MINUTE, quotaKeyOf, requestRateRulesOf, rulesFor, tokensRuleIndexes, type Endpoint } from '@/lib/gateway/admission/rules';
import { rateLimitHeaders } from '@/lib/gateway/admission/headers';
import { refuseDenied } from '@/lib/gateway/admission/deny';
import { admissionAnswered, admissionSent, LEASE_TTL_MS, quiet, sendNow, trackLeases, type Admission } from '@/lib/gateway/admission/lease';
import { forgetHeadroom, headroomKey, headroomOf, maySpeculate, noteHeadroom } from '@/lib/gateway/admission/speculation';

/** What one request asks the limiter for: its caller, rule set, reservation and lease. */
export interface AdmissionRequest {
  principal: Principal;
  cfg: GatewayConfig;
  model: ModelInfo | null;
  endpoint: Endpoint;
  /** Balance reservation, pico-USD. */
  reserve: bigint;
  /** Tokens the tokens-per-minute rules reserve (estimated input + the largest output); 0 or unset: none counted. */
  tokens?: number;
  leaseId: string;
  /** The client address the key's ranges are checked against, should the key be reloaded after an edit. */
  ip?: string;
  /** Set once the plan's window refused and the plan overflows: the balance pays this one. */
  pastPlan?: boolean;
}

/** An admission on its way, and whether the upstream may be called before it is answered. */
export interface PendingAdmission {
  admission: Promise<Admission>;
  speculative: boolean;
}

/** The balance load (lib/billing/queries.ts), its failure answered as a retryable 503. */
async function loadBalance(userId: string): Promise<AccountBalanceSnapshot> {
  try {
    return await loadAccountBalance(userId);
  } catch {
    throw new GatewayError('unavailable', 'The gateway cannot read this account balance right now. Please retry shortly.', { retryAfterMs: 2000 });
  }
}

const LONGEST_RETRIED_WAIT_MS = MINUTE + (2 * MINUTE) / 60;

/** The 429 for a limit that refused (counted in /metrics under `scope`); `tokens`: what a tokens rule was asked to reserve. */
export function limitError(result: Extract<AdmitResult, { reason: 'limit' }>, scope: string, tokens = 0): GatewayError {
  inc('gateway_limiter_rejections_total', { limit: result.rule.kind, scope });
  const headers = rateLimitHeaders(result.states);
  if (result.rule.kind === 'tokens') {
    // Tokens per minute: the request's reservation (its prompt's bound and its largest output) is what did not fit.
    const rule = result.rule;
    const used = Math.max(0, rule.limit - (result.states.find((s) => s.rule === rule)?.remaining ?? 0));
    if (tokens > rule.limit) {
      // Never fits, whatever the wait: not worth retrying as it is.
      headers['x-should-retry'] = 'false';
      return new GatewayError(
        'rate_limit_exceeded',
        `Rate limit exceeded: ${rule.label}. This request may use up to ${tokens} tokens (its prompt and its output cap), more than the limit allows in a minute: lower max_tokens or shorten the prompt.`,
        { retryAfterMs: result.retryAfterMs, headers },
      );
    }
    return new GatewayError(
      'rate_limit_exceeded',
      `Rate limit exceeded: ${rule.label}; ${used} used in the last minute and this request may use up to ${tokens} (its prompt and its output cap). Retry after ${Math.ceil(result.retryAfterMs / 1000)} s.`,
      { retryAfterMs: result.retryAfterMs, headers },
    );
  }
  // A long wait (the daily token quota, the hourly window) must not be slept on by SDKs that do
  // not cap Retry-After (@anthropic-ai/sdk): tell them not to retry at all. A per-minute window's
  // wait is worth retrying, and it can exceed the minute by a sub-bucket (lib/limits: 1/60 of the
  // window) and the rounding of the refusal's moment within it.
  if (result.retryAfterMs > LONGEST_RETRIED_WAIT_MS) headers['x-should-retry'] = 'false';
  return new GatewayError('rate_limit_exceeded', `Rate limit exceeded: ${result.rule.label}. Retry after ${Math.ceil(result.retryAfterMs / 1000)} s.`, {
    retryAfterMs: result.retryAfterMs,
    headers,
  });
}

/** A plan window's counter, loaded from the database: the first holds what is left, the others minus what is used. */
async function loadPlanWindow(pa: PlanAdmission, index: number, userId: string): Promise<void> {
  const w = pa.windows[index]!;
  let used: bigint;
  try {
    used = await windowUse(userId, pa.plan, w.start);
  } catch {
    throw new GatewayError('unavailable', "The gateway cannot read this plan's use right now. Please retry shortly.", { retryAfterMs: 2000 });
  }
  // Kept a day past the window's end: late settlements of its requests still find it.
  await getLimiter().initBalance(w.key, index === 0 ? w.cap - used : -used, [], [], Math.max(1, w.end - Date.now()) + 86_400_000);
}

/** The 429 of a plan window that is used up, on a plan that does not overflow to the balance. */
function planWindowError(pa: PlanAdmission, index: number): GatewayError {
  const w = pa.windows[index]!;
  const retryAfterMs = Math.max(1000, w.end - Date.now());
  const headers: Record<string, string> = {
    'x-service-plan': pa.plan.id,
    'x-service-plan-window': w.name,
    'x-service-plan-remaining': '0',
    'x-service-plan-reset': new Date(w.end).toISOString(),
  };
  if (retryAfterMs > LONGEST_RETRIED_WAIT_MS) headers['x-should-retry'] = 'false';
  inc('gateway_limiter_rejections_total', { limit: 'plan', scope: 'u' });
  return codedError(
    'rate_limit_exceeded',
    'plan.window_exhausted',
    { window: w.name, plan: pa.plan.name, limit: formatAllowance(pa.plan, w.cap, formatMoney), reset: new Date(w.end).toISOString() },
    { retryAfterMs, headers },
  );
}

/** Headers of an admission the plan pays: the plan, its first window's allowance left after this reservation, and its reset. */
function planHeaders(pa: PlanAdmission, left: bigint | undefined): Record<string, string> {
  const w = pa.windows[0]!;
  const h: Record<string, string> = {
    'x-service-billed-to': 'plan',
    'x-service-plan': pa.plan.id,
    'x-service-plan-window': w.name,
    'x-service-plan-reset': new Date(w.end).toISOString(),
  };
  if (left !== undefined) h['x-service-plan-remaining'] = pa.plan.unit === 'usd' ? formatPico(left > 0n ? left : 0n) : String(left > 0n ? left : 0n);
  return h;
}

/**
 * Admits in the limiter (one round trip); `roomKey`: where to keep the room reading, if anywhere.
 * `plan`: the account's plan for the model as `startAdmission` already found it (looked up once per
 * request); undefined when the principal changed since (a refreshed key) and it must be found again.
 */
async function admit(
  request: AdmissionRequest,
  roomKey: string | undefined,
  urgent = false,
  refreshed = false,
  plan?: PlanAdmission | null,
): Promise<Admission> {
  const { principal, cfg, model, endpoint, reserve, leaseId } = request;
  const limiter = getLimiter();
  const rules = rulesFor(principal, cfg, model, endpoint);
  // A plan that covers the model pays from its windows (lib/plans), else the balance (and the key's budgets).
  const pa =
    request.pastPlan || reserve === 0n || endpoint === 'batch' || model?.kind === 'video' ? null : plan !== undefined ? plan : planFor(principal, cfg, model);
  const planAmount = pa ? (pa.plan.unit === 'usd' ? reserve : pa.plan.unit === 'tokens' ? BigInt(request.tokens ?? 0) : 1n) : 0n;
  const key = pa ? pa.windows[0]!.key : balanceKey(principal.userId);
  const budgets = pa ? pa.windows.slice(1).map((w) => ({ key: w.key, cap: w.cap })) : keyBudgets(principal);
  const input = {
    rules,
    leaseId,
    leaseTtlMs: LEASE_TTL_MS,
    reserve: { key, amount: pa ? planAmount : reserve },
    budgets,
    denyKeys: principal.denyKeys,
    urgent: sendNow(urgent, 'admit'),
    // Only an admission with a tokens rule carries its token reservation (one more argument).
    tokens: tokensRuleIndexes(rules).length > 0 ? (request.tokens ?? 0) : undefined,
  };
  let result: AdmitResult;
  admissionSent();
  try {
    result = await limiter.admit(input);
    // First request of this account since start-up (or since Redis lost it): one database read.
    // The limiter may switch backends in between, so try twice before calling it unavailable.
    for (let tries = 0; tries < 2 + (budgets?.length ?? 0) && !result.ok && result.reason === 'balance_unknown'; tries++) {
      if (pa) await loadPlanWindow(pa, result.index ?? 0, principal.userId);
      else if (result.index && budgets)
        await loadKeyBudget(limiter, principal, keyBudgets(principal)![result.index - 1]!); // a key budget's counter
      else {
        const loaded = await loadBalance(principal.userId);
        await limiter.initBalance(key, loaded.amount, loaded.credits, loaded.included);
      }
      result = await limiter.admit(input);
    }
  } finally {
    admissionAnswered();
  }
  if (!result.ok) {
    if (roomKey) forgetHeadroom(roomKey);
    if (result.reason === 'limit') throw limitError(result, keyScope(result.rule.key), input.tokens);
    // The key was edited since it was cached here (index 2, lib/events.ts): admitted under its new controls.
    if (result.reason === 'denied' && result.index === 2 && !refreshed) {
      return admit({ ...request, principal: await refreshedPrincipal(principal, model?.name ?? null, request.ip ?? '') }, roomKey, urgent, true);
    }
    if (result.reason === 'denied') throw refuseDenied(principal, result.index);
    if (result.reason === 'balance_unknown') {
      throw new GatewayError('unavailable', 'The gateway cannot read this account balance right now. Please retry shortly.', { retryAfterMs: 1000 });
    }
    if (pa) {
      // A window is used up: past it, the balance pays (overflow) or the request is refused.
      if (pa.plan.overflow === 'balance') return admit({ ...request, pastPlan: true }, roomKey, urgent, refreshed, plan);
      throw planWindowError(pa, result.index ?? 0);
    }
    if (result.index && budgets) throw keyBudgetError(principal, keyBudgets(principal)![result.index - 1]!, result.available, reserve);
    const available = result.available > 0n ? result.available : 0n;
    throw new Unaffordable(
      'insufficient_balance',
      `Insufficient balance: this request may cost up to ${formatMoney(reserve)} and the balance available is ${formatMoney(available)}. Recharge in the dashboard.`,
      available,
    );
  }
  if (roomKey && !pa) noteHeadroom(roomKey, result.states, result.balance, reserve);
  const headers = rateLimitHeaders(result.states);
  if (pa) Object.assign(headers, planHeaders(pa, result.balance));
  else if (reserve > 0n && cfg.plans.size > 0) headers['x-service-billed-to'] = 'balance';
  const admission: Admission = {
    leaseId,
    userId: principal.userId,
    concurrencyKeys: concurrencyKeysOf(rules),
    quotaKey: quotaKeyOf(rules),
    reserved: pa ? planAmount : reserve,
    budgetKeys: budgets?.map((b) => b.key),
    headers,
    renewedAt: Date.now(),
    plan: pa ? { info: pa.plan, key } : undefined,
  };
  const tokenRules = tokensRuleIndexes(rules);
  if (tokenRules.length > 0 && request.tokens) {
    admission.tokensReserved = request.tokens;
    admission.tokenReservations = tokenRules.map((i) => {
      const s = result.states[i];
      return { key: s.rule.key, windowMs: (s.rule as { windowMs: number }).windowMs, at: s.at ?? Date.now() };
    });
  }
  trackLeases(admission);
  return admission;
}

/**
 * Starts the admission of a request. `speculative` says the caller may go upstream at once
 * (speculation.ts); otherwise it must await `admission` first. Streams speculate: their time to
 * first byte is what the saved round trip shortens. A non-streaming request speculates by default
 * only while this instance is quiet (lease.ts): there the saved round trip is most of what the
 * gateway adds to a call, while under load the overlap costs CPU per request (more event-loop
 * turns, smaller limiter batches; docs/decisions/007-speculative-admission.md). SPECULATIVE_ADMISSION=all
 * speculates under load too, `streams` for streams only, `off` never. Either way the request is
 * answered only once `admission` has resolved, and a rejection of it is the request's answer.
 */
export function startAdmission(request: AdmissionRequest, stream: boolean): PendingAdmission {
  const { principal, model, endpoint, reserve } = request;
  const mode = env.SPECULATIVE_ADMISSION;
  // With speculation off no reading is kept; otherwise every admission of the account refreshes
  // the reading that its next request may use.
  const key = mode === 'off' ? undefined : headroomKey(principal.userId, model, endpoint);
  const eligible = stream || mode === 'all' || (mode === 'auto' && quiet());
  const h = key && eligible ? headroomOf(key) : undefined;
  // lib/keys: not with a key budget; lib/plans: not on a plan (its windows are not in the room reading).
  const plan = planFor(principal, request.cfg, model);
  const speculative = maySpeculate(h, reserve) && mayOutrunAdmission(principal) && !plan;
  // A speculative admission asks to be sent at once (urgent, on a quiet instance): its reply gates the first byte.
  const admission = admit(request, key, speculative, false, plan);
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

/**
 * Counts a request refused before admission (malformed body, unknown model) against the account's
 * request rate, with the request-rate rules alone: no reservation, no lease. Answers the 429 to
 * send instead when the account is over it; null otherwise (or when the limiter is unreachable:
 * the refusal stands either way).
 */
export async function countRefused(principal: Principal, cfg: GatewayConfig, endpoint: Endpoint, leaseId: string): Promise<GatewayError | null> {
  const rules = requestRateRulesOf(rulesFor(principal, cfg, null, endpoint));
  if (rules.length === 0) return null;
  try {
    const result = await getLimiter().admit({ rules, leaseId, leaseTtlMs: LEASE_TTL_MS });
    return result.ok || result.reason !== 'limit' ? null : limitError(result, 'refused');
  } catch {
    return null;
  }
}
