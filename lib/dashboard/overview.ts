import { getConfig, tierNames, type GatewayConfig, type TierName } from '@/lib/config';
import { usdToCny } from '@/lib/money';
import { GatewayError } from '@/lib/errors';
import { dailyUsageFromRollup, getAccount, startOfUtcDay, startOfUtcMonth, usageTotalsByDay, type Account, type DailyUsage, type UsageTotals } from './queries';

export interface EffectiveLimits {
  rpm: number;
  rph: number;
  /** null = unlimited */
  tokensPerDay: number | null;
  concurrency: number;
}

export interface NextTier {
  name: TierName;
  /** Monthly spend that promotes automatically; null = by contact only. */
  promoteAtUsd: bigint | null;
  /** What is left to spend this month; 0 once reached. */
  remainingUsd: bigint | null;
}

export interface Overview {
  account: Account;
  balanceCny: bigint;
  limits: EffectiveLimits;
  nextTier: NextTier | null;
  month: UsageTotals;
  today: UsageTotals;
  daily: DailyUsage[];
  usdToCny: string;
}

const DAY_MS = 86_400_000;

/** The tier's limits with the account's own overrides (enterprise and VIP accounts can have them) on top. */
export function effectiveLimits(config: GatewayConfig, tier: TierName, overrides: unknown): EffectiveLimits {
  const t = config.tiers[tier];
  const o = (typeof overrides === 'object' && overrides !== null ? overrides : {}) as Record<string, unknown>;
  const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;
  return {
    rpm: isCount(o.rpm) ? o.rpm : t.rpm,
    rph: isCount(o.rph) ? o.rph : t.rph,
    tokensPerDay: o.tokensPerDay === null ? null : isCount(o.tokensPerDay) ? o.tokensPerDay : t.tokensPerDay,
    concurrency: isCount(o.concurrency) ? o.concurrency : t.concurrency,
  };
}

/** The tier after `tier` and what this month's spend still lacks to reach it; null at the top. */
export function nextTier(config: GatewayConfig, tier: TierName, monthSpend: bigint): NextTier | null {
  const name = tierNames[tierNames.indexOf(tier) + 1];
  if (!name) return null;
  const promoteAtUsd = config.tiers[name].promoteAtMonthlySpend;
  if (promoteAtUsd === null) return { name, promoteAtUsd: null, remainingUsd: null };
  return { name, promoteAtUsd, remainingUsd: monthSpend >= promoteAtUsd ? 0n : promoteAtUsd - monthSpend };
}

export async function getOverview(userId: string, now = new Date()): Promise<Overview> {
  const config = getConfig();
  const tomorrow = new Date(startOfUtcDay(now).getTime() + DAY_MS);
  const [account, month, today, daily] = await Promise.all([
    getAccount(userId),
    // Whole UTC days: read from the daily rollup (UsageDaily), not the raw log.
    usageTotalsByDay(userId, startOfUtcMonth(now), tomorrow),
    usageTotalsByDay(userId, startOfUtcDay(now), tomorrow),
    dailyUsageFromRollup(userId, 30, now),
  ]);
  if (!account) throw new GatewayError('not_found', 'No such account.');
  return {
    account,
    balanceCny: usdToCny(account.balanceUsd, config.cnyRateNano),
    limits: effectiveLimits(config, account.tier, account.limits),
    nextTier: nextTier(config, account.tier, month.spendUsd),
    month,
    today,
    daily,
    usdToCny: config.usdToCny,
  };
}
