import { getDb } from '@/lib/db';
import { getConfig, type TierName } from '@/lib/config';
import { publishGatewayEvent } from '@/lib/events';
import { decimalToPico } from '@/lib/billing/ledger';

// Automatic tier promotion by spend in the current UTC calendar month. It only ever moves an
// account up, never to enterprise (by contact), and never one an operator has set (tierLocked).

const rank: Record<TierName, number> = { free: 0, pro: 1, vip: 2, enterprise: 3 };

export interface Promotion {
  userId: string;
  from: TierName;
  to: TierName;
  /** Spend this month in pico-USD. */
  monthlySpend: bigint;
}

/** [start of the UTC month of `now`, start of the next one). */
function monthRange(now: Date): { gte: Date; lt: Date } {
  return {
    gte: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    lt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/** Tiers reachable automatically, highest first. */
function promotableTiers(): { name: TierName; threshold: bigint }[] {
  return Object.values(getConfig().tiers)
    .filter((t) => t.promoteAtMonthlySpend !== null && t.name !== 'enterprise')
    .map((t) => ({ name: t.name, threshold: t.promoteAtMonthlySpend as bigint }))
    .sort((a, b) => rank[b.name] - rank[a.name]);
}

/** Usage charged this UTC month in pico-USD (usage ledger entries are negative; spend is positive). */
export async function monthlySpend(userId: string, now = new Date()): Promise<bigint> {
  const db = await getDb();
  const agg = await db.ledgerEntry.aggregate({
    where: { userId, kind: 'usage', createdAt: monthRange(now) },
    _sum: { amountUsd: true },
  });
  return agg._sum.amountUsd ? -decimalToPico(agg._sum.amountUsd) : 0n;
}

/**
 * Promotes each account whose spend this month reached a higher tier's threshold, and announces the
 * change so every instance applies the new limits at once. Called by the usage writer after each flush.
 */
export async function promoteByMonthlySpend(userIds: string[], now = new Date()): Promise<Promotion[]> {
  const targets = promotableTiers();
  if (userIds.length === 0 || targets.length === 0) return [];
  const db = await getDb();
  const topRank = rank[targets[0].name];
  // Accounts already at the highest automatic tier are skipped before any spend is summed.
  const users = await db.user.findMany({
    where: { id: { in: [...new Set(userIds)] }, tierLocked: false, tier: { not: 'enterprise' } },
    select: { id: true, tier: true },
  });
  const candidates = users.filter((u) => rank[u.tier] < topRank);
  if (candidates.length === 0) return [];

  // One grouped query for the whole batch rather than one per account.
  const sums = await db.ledgerEntry.groupBy({
    by: ['userId'],
    where: { userId: { in: candidates.map((u) => u.id) }, kind: 'usage', createdAt: monthRange(now) },
    _sum: { amountUsd: true },
  });
  const spendByUser = new Map(sums.map((s) => [s.userId, s._sum.amountUsd ? -decimalToPico(s._sum.amountUsd) : 0n]));

  const promotions: Promotion[] = [];
  for (const user of candidates) {
    const spend = spendByUser.get(user.id) ?? 0n;
    const target = targets.find((t) => t.threshold <= spend && rank[t.name] > rank[user.tier]);
    if (!target) continue;
    // Guarded update: an operator's concurrent setTier (which locks the tier) wins.
    const updated = await db.user.updateMany({
      where: { id: user.id, tier: user.tier, tierLocked: false },
      data: { tier: target.name },
    });
    if (updated.count === 0) continue;
    await publishGatewayEvent({ type: 'account-changed', userId: user.id });
    promotions.push({ userId: user.id, from: user.tier, to: target.name, monthlySpend: spend });
  }
  return promotions;
}
