// Subscriptions: which plan an account has, granted by the operator, a redemption code or Stripe
// Billing (issue 42; docs/decisions/047), and what its windows have used.
import type { Prisma, Subscription } from '@/lib/generated/prisma/client';
import { getConfig, type PlanInfo } from '@/lib/config';
import { getDb } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { publishGatewayEvent } from '@/lib/events';
import { pendingPlanUse } from '@/lib/billing/writer';
import { usdToPico } from '@/lib/money';
import { writeAudit, type Actor } from '@/lib/audit';
import { isLive, windowsAt, type WindowState } from '@/lib/plans/windows';
import { MAX_PLAN_DAYS } from '@/lib/schemas/admin/accounts';

export { isLive, principalPlanOf } from '@/lib/plans/windows';

const DAY_MS = 86_400_000;
// The route schema's bound (lib/schemas/admin/accounts.ts), so the console and the check agree.
export { MAX_PLAN_DAYS };
type Tx = Prisma.TransactionClient;

/** The account's live subscription (the newest, should there be two), or null. */
export async function currentSubscription(userId: string, tx?: Tx): Promise<Subscription | null> {
  const db = tx ?? (await getDb());
  const rows = await db.subscription.findMany({
    where: { userId, status: { in: ['active', 'past_due'] } },
    orderBy: { startedAt: 'desc' },
    take: 3,
  });
  return rows.find((s) => isLive(s)) ?? null;
}

/** The plan named, or a 400 naming `param`; `offered`: a retired plan (lib/plans/catalogue.ts) is refused too. */
export function planOrThrow(planId: string, param = 'plan', opts: { offered?: boolean } = {}): PlanInfo {
  const plan = getConfig().plans.get(planId);
  if (!plan || (opts.offered && plan.retired)) throw codedError('invalid_request', 'plan.unknown', { plan: planId }, { param });
  return plan;
}

/** Every instance drops its cached copies of the account's keys: the next request sees the plan. */
export async function announcePlanChange(userId: string): Promise<void> {
  await publishGatewayEvent({ type: 'account-changed', userId }).catch(() => undefined);
}

/**
 * Grants `planId` for `days` days (operator, code): the same plan, still live, is extended; another
 * live plan ends now and the new one starts (its windows anchored now). Inside `tx` when given (a
 * code's redemption); the caller then announces the change after its commit.
 */
export async function grantPlan(
  userId: string,
  planId: string,
  days: number,
  source: 'operator' | 'code',
  opts: { tx?: Tx; actor?: Actor; now?: number } = {},
): Promise<Subscription> {
  planOrThrow(planId);
  if (!Number.isInteger(days) || days < 1 || days > MAX_PLAN_DAYS) throw codedError('invalid_request', 'plan.days', { max: MAX_PLAN_DAYS }, { param: 'days' });
  const now = opts.now ?? Date.now();
  const run = async (tx: Tx) => {
    // One grant at a time per account: the row lock orders concurrent grants.
    await tx.$queryRaw`SELECT 1 FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE`;
    const current = await currentSubscription(userId, tx);
    let sub: Subscription;
    if (current && current.planId === planId && current.source !== 'stripe') {
      sub = await tx.subscription.update({
        where: { id: current.id },
        data: { currentPeriodEnd: new Date(current.currentPeriodEnd.getTime() + days * DAY_MS), status: 'active', graceUntil: null, cancelAtPeriodEnd: false },
      });
    } else {
      if (current) await tx.subscription.update({ where: { id: current.id }, data: { status: 'canceled', currentPeriodEnd: new Date(now) } });
      sub = await tx.subscription.create({
        data: { userId, planId, source, startedAt: new Date(now), currentPeriodEnd: new Date(now + days * DAY_MS) },
      });
    }
    if (opts.actor)
      await writeAudit(
        opts.actor,
        {
          action: 'plan.grant',
          targetType: 'account',
          targetId: userId,
          before: current ? { plan: current.planId } : undefined,
          after: { plan: planId, days, until: sub.currentPeriodEnd },
        },
        tx,
      );
    return sub;
  };
  if (opts.tx) return run(opts.tx);
  const sub = await (await getDb()).$transaction(run);
  await announcePlanChange(userId);
  return sub;
}

/** Ends the account's live plan now (operator) or at its period's end (the customer, for a granted plan). */
export async function endPlan(userId: string, when: 'now' | 'period_end', actor?: Actor): Promise<Subscription | null> {
  const db = await getDb();
  const current = await currentSubscription(userId);
  if (!current) return null;
  const sub =
    when === 'now'
      ? await db.subscription.update({ where: { id: current.id }, data: { status: 'canceled', currentPeriodEnd: new Date() } })
      : await db.subscription.update({ where: { id: current.id }, data: { cancelAtPeriodEnd: true } });
  if (actor) await writeAudit(actor, { action: 'plan.end', targetType: 'account', targetId: userId, before: { plan: current.planId }, after: { when } });
  await announcePlanChange(userId);
  return sub;
}

/** What a window has used since `since`, in the plan's unit: written rows plus this instance's queued ones. */
export async function windowUse(userId: string, plan: PlanInfo, since: number): Promise<bigint> {
  const db = await getDb();
  const rows = await db.$queryRaw<{ usd: string; tokens: string; requests: string }[]>`
    SELECT COALESCE(SUM("costUsd"), 0)::text AS usd,
           COALESCE(SUM("promptTokens"::bigint + "completionTokens" + "cacheReadTokens" + "cacheWriteTokens"), 0)::text AS tokens,
           COUNT(*) FILTER (WHERE "costUsd" > 0 OR "promptTokens" + "completionTokens" + "cacheReadTokens" + "cacheWriteTokens" > 0)::text AS requests
    FROM "RequestLog" WHERE "userId" = ${userId}::uuid AND "billedTo" = 'plan' AND "createdAt" >= ${new Date(since)}`;
  const r = rows[0] ?? { usd: '0', tokens: '0', requests: '0' };
  const queued = pendingPlanUse(userId, since);
  if (plan.unit === 'usd') return usdToPico(r.usd) + queued.usd;
  if (plan.unit === 'tokens') return BigInt(r.tokens) + BigInt(queued.tokens);
  return BigInt(r.requests) + BigInt(queued.requests);
}

export interface PlanStatus {
  plan: PlanInfo;
  subscription: Subscription;
  windows: (WindowState & { used: bigint; remaining: bigint })[];
}

/** The account's plan with each window's use now (the dashboard's card, GET /api/plan). */
export async function planStatus(userId: string): Promise<PlanStatus | null> {
  const sub = await currentSubscription(userId);
  if (!sub) return null;
  const plan = getConfig().plans.get(sub.planId);
  if (!plan) return null;
  const windows = windowsAt(plan, { subscriptionId: sub.id, anchor: sub.startedAt.getTime() }, Date.now(), userId);
  const used = await Promise.all(windows.map((w) => windowUse(userId, plan, w.start)));
  return {
    plan,
    subscription: sub,
    windows: windows.map((w, i) => ({ ...w, used: used[i]!, remaining: w.cap > used[i]! ? w.cap - used[i]! : 0n })),
  };
}
