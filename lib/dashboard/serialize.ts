import { formatPico, parseDecimal } from '@/lib/money';
import { breakdownView } from '@/lib/pricing/breakdown';
import { cacheSavingJson } from '@/lib/cache/savings';
import type { Overview } from './overview';
import type { DailyUsage, LedgerItem, LogDetail, LogEntry, UsageTotals } from './queries';

// JSON shapes of the dashboard API: snake_case, money as exact decimal strings, times as ISO 8601 UTC.

const money = formatPico;

export function logJson(e: LogEntry) {
  return {
    id: e.id,
    created_at: e.createdAt.toISOString(),
    endpoint: e.endpoint,
    api_key_id: e.apiKeyId,
    model_requested: e.modelRequested,
    model_served: e.modelServed,
    fallback: isFallback(e),
    channel: e.channel,
    status: e.status,
    outcome: e.outcome,
    error_code: e.errorCode,
    stream: e.stream,
    prompt_tokens: e.promptTokens,
    completion_tokens: e.completionTokens,
    cache_read_tokens: e.cacheReadTokens,
    cache_write_tokens: e.cacheWriteTokens,
    tokens_estimated: e.tokensEstimated,
    cost_usd: money(e.costUsd),
    cost_cny: money(e.costCny),
    cny_rate: e.cnyRate,
    latency_ms: e.latencyMs,
    first_token_ms: e.firstTokenMs,
    route_reason: e.routeReason,
    region: e.region,
    /** Which pool paid: 'plan' (the subscription; the balance was not charged) or 'balance'. */
    billed_to: e.billedTo === 'plan' ? 'plan' : 'balance',
  };
}

export function logDetailJson(e: LogDetail) {
  return { ...logJson(e), attempts: e.attempts, ...cacheSavingJson(e), price_breakdown: priceBreakdownJson(e) };
}

/** How the request's cost was made, in USD and in CNY at the request's own rate; null for a row logged without one (docs/decisions/043). */
export function priceBreakdownJson(e: Pick<LogEntry, 'priceBreakdown' | 'cnyRate'>) {
  return e.priceBreakdown ? breakdownView(e.priceBreakdown, parseDecimal(e.cnyRate, 9)) : null;
}

/** The served model differs from the requested one (and the caller did not ask the router to choose). */
export function isFallback(e: Pick<LogEntry, 'modelRequested' | 'modelServed'>): boolean {
  return !!e.modelServed && !!e.modelRequested && e.modelServed !== e.modelRequested && e.modelRequested !== 'service-auto';
}

export function totalsJson(t: UsageTotals) {
  return {
    requests: t.requests,
    failed: t.failed,
    spend_usd: money(t.spendUsd),
    spend_cny: money(t.spendCny),
    prompt_tokens: t.promptTokens,
    completion_tokens: t.completionTokens,
  };
}

export function dailyJson(d: DailyUsage) {
  return { date: d.date, ...totalsJson(d) };
}

export function overviewJson(o: Overview) {
  return {
    account: {
      email: o.account.email,
      tier: o.account.tier,
      status: o.account.status,
      tier_locked: o.account.tierLocked,
      balance_usd: money(o.account.balanceUsd),
      balance_cny: money(o.balanceCny),
    },
    limits: {
      rpm: o.limits.rpm,
      rph: o.limits.rph,
      tokens_per_day: o.limits.tokensPerDay,
      concurrency: o.limits.concurrency,
    },
    next_tier: o.nextTier && {
      name: o.nextTier.name,
      promote_at_monthly_spend_usd: o.nextTier.promoteAtUsd === null ? null : money(o.nextTier.promoteAtUsd),
      remaining_usd: o.nextTier.remainingUsd === null ? null : money(o.nextTier.remainingUsd),
    },
    month: totalsJson(o.month),
    today: totalsJson(o.today),
    daily: o.daily.map(dailyJson),
    usd_to_cny: o.usdToCny,
  };
}

export function ledgerJson(item: LedgerItem) {
  return {
    key: item.key,
    kind: item.kind,
    at: item.at.toISOString(),
    day: item.day,
    amount_usd: money(item.amountUsd),
    entries: item.entries,
    balance_after_usd: money(item.balanceAfterUsd),
    reference: item.reference,
    note: item.note,
  };
}
