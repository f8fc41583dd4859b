import { GatewayError } from '@/lib/errors';
import { formatMoney } from '@/lib/format';
import type { Limiter, Rule } from '@/lib/limits/types';
import { accountKey } from '@/lib/limits/keys';
import { forgetPrincipal, reloadPrincipal, type Principal } from '@/lib/auth/principal';
import { checkKeyAccess, checkKeyModel } from '@/lib/keys/access';
import { monthOf } from '@/lib/keys/controls';
import { loadGroupSpend, loadKeySpend } from '@/lib/keys/queries';

// A key's rate limits and budgets, in the admission's one limiter call (lib/gateway/admission/
// calls these from small hooks). The rules are exact across instances as every other rule; the
// budgets are reservations next to the account balance's (AdmitInput.budgets).

/** The key's own request rate and concurrency, on top of the account's (the stricter refuses). */
export function keyRules(principal: Principal): Rule[] {
  const g = principal.guard;
  if (!g || (g.rpm === null && g.tpm === null && g.concurrency === null)) return [];
  const rules: Rule[] = [];
  const base = accountKey(principal.userId, `k:${principal.keyId}`);
  const name = `API key "${g.name}"`;
  if (g.rpm !== null) {
    const label = `${name}: ${g.rpm} requests per minute`;
    rules.push({ kind: 'window', key: `${base}:rpm`, limit: g.rpm, windowMs: 60_000, label, requests: true });
  }
  if (g.tpm !== null) rules.push({ kind: 'tokens', key: `${base}:tpm`, limit: g.tpm, windowMs: 60_000, label: `${name}: ${g.tpm} tokens per minute` });
  if (g.concurrency !== null)
    rules.push({ kind: 'concurrency', key: `${base}:conc`, limit: g.concurrency, label: `${name}: ${g.concurrency} concurrent requests` });
  return rules;
}

/** One of a key's budgets as the admission reserves against it. */
export interface KeyBudget {
  /** The limiter counter: minus what the key spent in the period (see AdmitInput.budgets). */
  key: string;
  cap: bigint;
  period: 'lifetime' | 'monthly';
  /** Monthly: the month's label ("2026-11") and first instant (Unix ms, UTC). */
  month?: { label: string; start: number };
  /**
   * Whose budget: the key's own, its project's or the monthly budget of the member who made the key
   * (docs/decisions/056). The shared ones are counters of every key of the project or member, in the
   * account's hash tag like the key's, so they are reserved in the same limiter call.
   */
  owner?: { kind: 'member' | 'project'; id: string; name: string };
}

/**
 * The budgets of the caller's key this request reserves against, or undefined. Counters are per
 * controls version: an edit starts from the database's figure, so a budget set again after a time
 * without one never counts against a counter that stopped following the spend.
 */
export function keyBudgets(principal: Principal, now = Date.now()): KeyBudget[] | undefined {
  const g = principal.guard;
  if (!g || !hasBudget(g)) return undefined;
  const base = accountKey(principal.userId, `kb:${principal.keyId}:${g.version}`);
  const out: KeyBudget[] = [];
  if (g.budgetPico !== null) out.push({ key: base, cap: g.budgetPico, period: 'lifetime' });
  const month = monthOf(now);
  if (g.monthlyBudgetPico !== null) out.push({ key: `${base}:m:${month.label}`, cap: g.monthlyBudgetPico, period: 'monthly', month });
  for (const [kind, tag, group] of [
    ['project', 'pb', g.project],
    ['member', 'mb', g.member],
  ] as const) {
    if (!group || group.monthlyBudgetPico === null) continue;
    out.push({
      key: accountKey(principal.userId, `${tag}:${group.id}:${group.budgetVersion}:m:${month.label}`),
      cap: group.monthlyBudgetPico,
      period: 'monthly',
      month,
      owner: { kind, id: group.id, name: group.name },
    });
  }
  return out;
}

function hasBudget(g: NonNullable<Principal['guard']>): boolean {
  return (
    g.budgetPico !== null || g.monthlyBudgetPico !== null || (g.project?.monthlyBudgetPico ?? null) !== null || (g.member?.monthlyBudgetPico ?? null) !== null
  );
}

/**
 * Budget counters expire and are loaded again from the database when next needed (its open
 * reservations then settle at their cost only, as a reloaded balance's): a month's counter outlives
 * its month, and counters of replaced control versions do not stay in Redis for good.
 */
const MONTHLY_COUNTER_TTL_MS = 40 * 86_400_000;
const LIFETIME_COUNTER_TTL_MS = 7 * 86_400_000;

/**
 * A key with a budget never has the upstream called before its admission (speculative dispatch):
 * the room readings that allow it cover the rules and the balance, not the budget counters, and a
 * nearly spent budget would otherwise send calls upstream only to cancel them.
 */
export function mayOutrunAdmission(principal: Principal): boolean {
  const g = principal.guard;
  return !g || !hasBudget(g);
}

/** Loads a budget's counter from the database (its first use on this Redis, or after an edit). */
export async function loadKeyBudget(limiter: Limiter, principal: Principal, budget: KeyBudget): Promise<void> {
  let spent: bigint;
  try {
    spent = budget.owner
      ? await loadGroupSpend(
          principal.userId,
          budget.owner.kind === 'member' ? { memberId: budget.owner.id } : { projectId: budget.owner.id },
          budget.month!.start,
        )
      : await loadKeySpend(principal.userId, principal.keyId, budget.month?.start);
  } catch {
    throw new GatewayError('unavailable', "The gateway cannot read this key's spend right now. Please retry shortly.", { retryAfterMs: 2000 });
  }
  await limiter.initBalance(budget.key, -spent, [], [], budget.period === 'monthly' ? MONTHLY_COUNTER_TTL_MS : LIFETIME_COUNTER_TTL_MS);
}

/**
 * A 402 for a request its key budget or balance cannot cover at its largest: says what is left, so
 * that the pipeline can lower the request's output cap to fit (lib/gateway/admission/clamp.ts).
 */
export class Unaffordable extends GatewayError {
  constructor(
    code: 'key_budget_exceeded' | 'insufficient_balance',
    message: string,
    /** What is left to spend, pico-USD. */
    readonly available: bigint,
  ) {
    super(code, message);
  }

  /** The same refusal, saying how large an output cap would fit (`field`: the surface's name for it). */
  naming(field: string, tokens: number): Unaffordable {
    const hint = tokens > 0 ? ` The largest "${field}" it can pay for now is ${tokens}; send that or less.` : ' Not even the prompt fits in what is left.';
    return new Unaffordable(this.code as 'key_budget_exceeded' | 'insufficient_balance', this.message + hint, this.available);
  }
}

/** The 402 naming the key's budget, its period and what is left. `counter`: minus the spend. */
export function keyBudgetError(principal: Principal, budget: KeyBudget, counter: bigint, reserve: bigint): GatewayError {
  const left = budget.cap + counter > 0n ? budget.cap + counter : 0n;
  if (budget.owner) {
    // The same 402 and code as a key's budget (clients and the output-cap clamp handle it as one), naming whose it is.
    const whose = budget.owner.kind === 'project' ? `the project "${budget.owner.name}"` : `the organization member ${budget.owner.name}`;
    const title = budget.owner.kind === 'project' ? 'Project budget exceeded' : 'Member budget exceeded';
    return new Unaffordable(
      'key_budget_exceeded',
      `${title}: ${whose} has a monthly budget of ${formatMoney(budget.cap)} (${budget.month!.label}, calendar month UTC) with ${formatMoney(left)} left, and this request may cost up to ${formatMoney(reserve)}.`,
      left,
    );
  }
  const period =
    budget.period === 'monthly'
      ? `monthly budget of ${formatMoney(budget.cap)} (${budget.month!.label}, calendar month UTC)`
      : `lifetime budget of ${formatMoney(budget.cap)}`;
  return new Unaffordable(
    'key_budget_exceeded',
    `Key budget exceeded: the API key "${principal.guard?.name ?? ''}" has a ${period} with ${formatMoney(left)} left, and this request may cost up to ${formatMoney(reserve)}.`,
    left,
  );
}

/**
 * The caller's key was edited since this instance cached it (the admission met the marker of its
 * old version): reads it again and checks the request against the new controls. The model and
 * address were checked against the old ones already.
 */
export async function refreshedPrincipal(principal: Principal, model: string | null, ip: string): Promise<Principal> {
  const fresh = await reloadPrincipal(principal.keyHash);
  if (!fresh) throw new GatewayError('invalid_api_key', 'Invalid or revoked API key.');
  if (fresh.suspended) throw new GatewayError('account_suspended', 'This account is suspended.');
  try {
    checkKeyAccess(fresh.guard, ip);
    if (model !== null) checkKeyModel(fresh.guard, model);
  } catch (err) {
    if (err instanceof GatewayError) decidedFresh.add(err);
    throw err;
  }
  return fresh;
}

/** Refusals decided on a copy just read from the database: final, whatever the old copy's markers say. */
const decidedFresh = new WeakSet<GatewayError>();

const KEY_REFUSALS = new Set(['model_not_allowed', 'ip_not_allowed', 'key_expired']);

/**
 * A refusal by the key's controls was decided on this instance's cached copy. If the key was edited
 * since (its version marker exists; one Redis read, on refusals only), the copy is dropped and the
 * client is told to retry, instead of a final 403/401 the key no longer deserves: a loosening edit
 * then holds on the retry, as a tightening one holds in the admission itself.
 */
export async function recheckKeyRefusal(
  principal: Principal | undefined,
  err: GatewayError,
  denied: (keys: string[]) => Promise<number>,
): Promise<GatewayError> {
  if (!principal || !KEY_REFUSALS.has(err.code) || decidedFresh.has(err)) return err;
  let index: number;
  try {
    index = await denied(principal.denyKeys);
  } catch {
    return err;
  }
  if (index !== 2) return err;
  forgetPrincipal(principal.keyHash);
  return new GatewayError('unavailable', 'This API key was just edited. Please retry.', { retryAfterMs: 1000 });
}
