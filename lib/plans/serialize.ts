// The plan as the API and pages show it: money as exact USD decimals with CNY beside, counts as numbers.
import type { GatewayConfig, PlanInfo } from '@/lib/config';
import { formatPico, usdToCny } from '@/lib/money';
import type { PlanStatus } from '@/lib/plans/subscriptions';

const amountOf = (plan: PlanInfo, v: bigint): string | number => (plan.unit === 'usd' ? formatPico(v) : Number(v));

export function serializePlan(plan: PlanInfo, cfg: GatewayConfig) {
  return {
    id: plan.id,
    name: plan.name,
    description: plan.description ?? null,
    price_usd_monthly: formatPico(plan.priceMonthly),
    price_cny_monthly: formatPico(usdToCny(plan.priceMonthly, cfg.cnyRateNano)),
    unit: plan.unit,
    windows: plan.windows.map((w) => ({ name: w.name, hours: w.ms / 3_600_000, limit: amountOf(plan, w.cap) })),
    models: plan.models ? [...plan.models] : ['*'],
    tier: plan.tier ?? null,
    overflow: plan.overflow,
    subscribable: Boolean(plan.stripePriceId),
  };
}

export function serializePlanStatus(status: PlanStatus | null, cfg: GatewayConfig) {
  if (!status) return null;
  const { plan, subscription: s } = status;
  return {
    plan: serializePlan(plan, cfg),
    subscription: {
      id: s.id,
      status: s.status,
      source: s.source,
      started_at: s.startedAt.toISOString(),
      current_period_end: s.currentPeriodEnd.toISOString(),
      cancel_at_period_end: s.cancelAtPeriodEnd,
      grace_until: s.graceUntil?.toISOString() ?? null,
      latest_invoice_url: s.latestInvoiceUrl,
    },
    windows: status.windows.map((w) => ({
      name: w.name,
      limit: amountOf(plan, w.cap),
      used: amountOf(plan, w.used),
      remaining: amountOf(plan, w.remaining),
      started_at: new Date(w.start).toISOString(),
      resets_at: new Date(w.end).toISOString(),
    })),
  };
}
