// The account's plan (issue 42 item 4): each window's use as a bar with its reset, the period's end,
// and, without a plan, the plans on offer to compare. A server component: no script of its own
// (the billing page passes in its Stripe buttons, so other pages load none).
import type { GatewayConfig, PlanInfo } from '@/lib/config';
import type { PlanStatus } from '@/lib/plans/subscriptions';
import { usdToCny } from '@/lib/billing/money';
import type { Translate } from '@/lib/i18n/translate';
import { cny, int, tierLabel, usd } from '@/lib/dashboard/format';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { Badge } from '@/components/ui/badge';
import { Progress } from '@/components/ui/progress';
import { LocalTime } from '@/components/ui/local-time';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

function amount(plan: PlanInfo, v: bigint, t: Translate): string {
  if (plan.unit === 'usd') return usd(v);
  const n = int(Number(v));
  return plan.unit === 'requests' ? t('{n} requests', { n }) : t('{n} tokens', { n });
}

function length(ms: number, t: Translate): string {
  return ms % 86_400_000 === 0 ? t('{n} days', { n: ms / 86_400_000 }) : t('{n} hours', { n: ms / 3_600_000 });
}

/** Fraction used, for the bar (exact enough at 4 digits). */
const fraction = (used: bigint, cap: bigint) => (cap === 0n ? 1 : Number((used * 10_000n) / cap) / 10_000);

/** `actions`: beside the status badge (the billing page's "Manage billing"). */
export function PlanCard({ status, cfg, t, actions }: { status: PlanStatus; cfg: GatewayConfig; t: Translate; actions?: React.ReactNode }) {
  const { plan, subscription: s } = status;
  const end = s.status === 'past_due' && s.graceUntil ? s.graceUntil : s.currentPeriodEnd;
  return (
    <Card data-testid="plan-card">
      <CardHeader
        title={t('Your plan')}
        description={t('{name}: {price} a month', {
          name: plan.name,
          price: `${usd(plan.priceMonthly)} (${cny(usdToCny(plan.priceMonthly, cfg.cnyRateNano))})`,
        })}
        actions={
          <div className="flex items-center gap-2">
            <Badge tone={s.status === 'past_due' ? 'amber' : 'green'}>{s.status === 'past_due' ? t('Past due') : t('Active')}</Badge>
            {actions}
          </div>
        }
      />
      <CardBody className="space-y-4">
        <p className="text-sm text-slate-600" data-testid="plan-period">
          {s.status === 'past_due' ? t('Payment failed: served until') : s.cancelAtPeriodEnd ? t('Ends') : t('Active until')}{' '}
          <LocalTime iso={end.toISOString()} />
        </p>
        <ul className="space-y-3">
          {status.windows.map((w) => (
            <li key={w.name} data-testid={`plan-window-${w.name}`}>
              <div className="flex flex-wrap items-baseline justify-between gap-x-3 text-sm">
                <span className="font-medium text-slate-900">
                  {w.name} <span className="font-normal text-slate-500">({length(w.ms, t)})</span>
                </span>
                <span className="tabular-nums text-slate-700" data-testid="plan-window-used">
                  {t('{used} of {limit}', { used: amount(plan, w.used, t), limit: amount(plan, w.cap, t) })}
                </span>
              </div>
              <Progress value={fraction(w.used, w.cap)} label={`${w.name}: ${amount(plan, w.used, t)} / ${amount(plan, w.cap, t)}`} className="mt-1.5" />
              <p className="mt-1 text-xs text-slate-500">
                {t('Resets')} <LocalTime iso={new Date(w.end).toISOString()} />
              </p>
            </li>
          ))}
        </ul>
        <p className="text-xs text-slate-500">
          {plan.overflow === 'balance' ? t('Past the allowance: billed to your balance.') : t('Past the allowance: refused until the window resets.')}{' '}
          {t('Covers: {models}', { models: plan.models ? [...plan.models].join(', ') : t('every model') })}
          {plan.tier ? ` ${t('Grants the {tier} tier while active.', { tier: tierLabel(plan.tier) })}` : ''}
        </p>
      </CardBody>
    </Card>
  );
}

/** The plans on offer, side by side (a table; stacked cards on phones). */
/** `subscribe`: a plan's button (the billing page's "Subscribe" for plans Stripe sells), or null. */
export function PlansOnOffer({
  cfg,
  t,
  footer,
  subscribe,
}: {
  cfg: GatewayConfig;
  t: Translate;
  footer?: React.ReactNode;
  subscribe?: (plan: PlanInfo) => React.ReactNode;
}) {
  const plans = [...cfg.plans.values()].filter((p) => !p.retired);
  if (plans.length === 0) return null;
  return (
    <Card data-testid="plans-on-offer">
      <CardHeader title={t('Plans')} description={t('Usage is billed to your balance. A plan pays for its models up to its windows’ allowance.')} />
      <Table>
        <THead>
          <Tr>
            <Th>{t('Plan')}</Th>
            <Th>{t('Price a month')}</Th>
            <Th>{t('Windows')}</Th>
            <Th>{t('Models')}</Th>
            <Th>{t('Beyond the allowance')}</Th>
            {subscribe && <Th className="sr-only">{t('Subscribe')}</Th>}
          </Tr>
        </THead>
        <TBody>
          {plans.map((p) => (
            <Tr key={p.id} data-testid={`plan-${p.id}`}>
              <Td className="font-medium text-slate-900">
                {p.name}
                {p.tier && <span className="ml-1 text-xs font-normal text-slate-500">({tierLabel(p.tier)})</span>}
              </Td>
              <Td className="tabular-nums">
                {usd(p.priceMonthly)} <span className="text-slate-500">({cny(usdToCny(p.priceMonthly, cfg.cnyRateNano))})</span>
              </Td>
              <Td>{p.windows.map((w) => `${amount(p, w.cap, t)} / ${length(w.ms, t)}`).join(' · ')}</Td>
              <Td>{p.models ? [...p.models].join(', ') : t('every model')}</Td>
              <Td>{p.overflow === 'balance' ? t('Billed to the balance') : t('Refused')}</Td>
              {subscribe && <Td>{subscribe(p)}</Td>}
            </Tr>
          ))}
        </TBody>
      </Table>
      {footer && <CardBody className="border-t border-slate-100 text-sm text-slate-600">{footer}</CardBody>}
    </Card>
  );
}
