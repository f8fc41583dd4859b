// Which plan pays for a request, and its windows (issue 42; docs/decisions/047). A window is fixed and
// anchored at the subscription's start: the 5-hour window k is [start + 5h·k, start + 5h·(k+1)).
// Each window is a counter in the limiter under the account's hash tag, named by the subscription,
// the window and k, so a new window is a new key (loaded from the database: what it has used so
// far) and an old one expires on its own. The first window is held like a balance (what is left);
// the others like a key's budget (minus what is used, against a cap): the admission takes the
// request's reservation from every one of them in the one limiter call (lib/limits/types.ts).
import type { GatewayConfig, ModelInfo, PlanInfo, PlanWindow, TierName } from '@/lib/config';
import type { Subscription } from '@/lib/generated/prisma/client';
import { accountKey } from '@/lib/limits/keys';

/** The account's current subscription as the key cache holds it (lib/auth/principal.ts). */
export interface PrincipalPlan {
  subscriptionId: string;
  planId: string;
  /** Epoch ms: the windows' anchor. */
  anchor: number;
  /** Epoch ms: served until then (the period's end, or the grace period's). */
  until: number;
}

export interface WindowState extends PlanWindow {
  /** Epoch ms the current window began and ends (its reset). */
  start: number;
  end: number;
  /** Its limiter counter. */
  key: string;
}

export interface PlanAdmission {
  plan: PlanInfo;
  sub: PrincipalPlan;
  windows: WindowState[];
}

/** The plan that pays for a request on `model`, if the account has one that is live and covers it. */
export function planFor(
  caller: { userId: string; plan?: PrincipalPlan | null },
  cfg: GatewayConfig,
  model: ModelInfo | null,
  now = Date.now(),
): PlanAdmission | null {
  const sub = caller.plan;
  if (!sub || !model || now >= sub.until) return null;
  const plan = cfg.plans.get(sub.planId);
  if (!plan || (plan.models && !plan.models.has(model.name))) return null;
  return { plan, sub, windows: windowsAt(plan, sub, now, caller.userId) };
}

/** Every window of the plan at `now`, with its bounds and its counter's key. */
export function windowsAt(plan: PlanInfo, sub: { subscriptionId: string; anchor: number }, now = Date.now(), userId?: string): WindowState[] {
  return plan.windows.map((w) => {
    const k = Math.max(0, Math.floor((now - sub.anchor) / w.ms));
    const start = sub.anchor + k * w.ms;
    return { ...w, start, end: start + w.ms, key: userId === undefined ? '' : windowKey(userId, sub.subscriptionId, plan.id, w, k) };
  });
}

// The plan and the window's length and cap are in the name: after a change of plan (an upgrade keeps
// its subscription) or an edit of the plan in the console, the new caps start from a fresh counter,
// loaded with what the window has used so far (the first window's counter holds cap minus use).
export const windowKey = (userId: string, subscriptionId: string, planId: string, w: PlanWindow, k: number): string =>
  accountKey(userId, `plan:${subscriptionId}:${planId}:${w.name}:${w.ms}:${w.cap}:${k}`);

/** What one request uses of a window, in the plan's unit: its list price, one request, or its tokens. */
export function planUseOf(plan: PlanInfo, cost: bigint, tokens: number): bigint {
  if (plan.unit === 'usd') return cost;
  if (plan.unit === 'tokens') return BigInt(Math.max(0, Math.round(tokens)));
  return cost > 0n || tokens > 0 ? 1n : 0n;
}

/** A window's amount as people read it: USD with its decimals, or a count. */
export function formatAllowance(plan: PlanInfo, amount: bigint, money: (pico: bigint) => string): string {
  if (plan.unit === 'usd') return money(amount);
  return `${amount} ${plan.unit}`;
}

/** Served now: active, or past due within its grace; and its period not over. */
export function isLive(sub: Pick<Subscription, 'status' | 'currentPeriodEnd' | 'graceUntil'>, now = Date.now()): boolean {
  if (sub.status === 'active') return sub.currentPeriodEnd.getTime() > now;
  if (sub.status === 'past_due') return (sub.graceUntil?.getTime() ?? 0) > now;
  return false;
}

/** The key cache's copy (lib/auth/principal.ts): only what admission needs. */
export function principalPlanOf(sub: Subscription | null | undefined): PrincipalPlan | undefined {
  if (!sub || !isLive(sub)) return undefined;
  const until = sub.status === 'past_due' ? (sub.graceUntil?.getTime() ?? 0) : sub.currentPeriodEnd.getTime();
  return { subscriptionId: sub.id, planId: sub.planId, anchor: sub.startedAt.getTime(), until };
}

const TIER_ORDER: TierName[] = ['free', 'pro', 'vip', 'enterprise'];

/** The tier an account has: its own, or its live plan's when that is higher (a plan never lowers one). */
export function effectiveTier(own: TierName, sub: PrincipalPlan | undefined, cfg: GatewayConfig): TierName {
  const granted = sub ? cfg.plans.get(sub.planId)?.tier : undefined;
  return granted && TIER_ORDER.indexOf(granted) > TIER_ORDER.indexOf(own) ? granted : own;
}
