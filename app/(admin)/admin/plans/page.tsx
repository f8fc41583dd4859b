import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { requireOperator } from '@/lib/admin/guard';
import { getConfig } from '@/lib/config';
import { getDb } from '@/lib/db';
import { rawPlanOf } from '@/lib/plans/catalogue';
import { cny, int, tierLabel, usd } from '@/lib/dashboard/format';
import { usdToCny } from '@/lib/money';
import { PlanEditor, PlanStateActions } from '@/components/admin/plan-editor';
import { Badge } from '@/components/ui/badge';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Plans')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

const TEMPLATE = {
  name: 'Coder',
  price_usd_monthly: '20',
  unit: 'usd',
  windows: [
    { name: '5h', hours: 5, limit: '5' },
    { name: 'weekly', days: 7, limit: '40' },
  ],
  models: ['*'],
  overflow: 'balance',
};

export default async function AdminPlansPage() {
  await requireOperator();
  const cfg = getConfig();
  const db = await getDb();
  const [t, counts, edited] = await Promise.all([
    serverT(),
    db.subscription.groupBy({ by: ['planId'], where: { status: { in: ['active', 'past_due'] }, currentPeriodEnd: { gt: new Date() } }, _count: true }),
    db.planOverride.findMany({ select: { id: true } }),
  ]);
  const live = new Map(counts.map((c) => [c.planId, c._count]));
  const editedIds = new Set(edited.map((e) => e.id));
  const plans = [...cfg.plans.values()];
  return (
    <>
      <PageHeader
        title={t('Plans')}
        description={t(
          'Monthly plans with windows of allowance. Those of the operator config can be changed here; a change reaches every instance within a second.',
        )}
        actions={<PlanEditor config={TEMPLATE} isNew />}
      />
      {plans.length === 0 && <EmptyState title={t('No plans yet')} />}
      <div className="space-y-4">
        {plans.map((p) => (
          <Card key={p.id} data-testid={`admin-plan-${p.id}`}>
            <CardHeader
              title={
                <span className="flex flex-wrap items-center gap-2">
                  {p.name} <span className="font-mono text-xs text-slate-500">{p.id}</span>
                  <Badge tone={p.source === 'console' ? 'blue' : 'neutral'}>{p.source === 'console' ? t('set in the console') : t('from the config')}</Badge>
                  {p.retired && <Badge tone="amber">{t('retired')}</Badge>}
                </span>
              }
              description={`${usd(p.priceMonthly)} (${cny(usdToCny(p.priceMonthly, cfg.cnyRateNano))}) · ${t('{n} subscribers', { n: int(live.get(p.id) ?? 0) })}`}
              actions={<PlanStateActions id={p.id} retired={Boolean(p.retired)} edited={editedIds.has(p.id)} />}
            />
            <CardBody className="space-y-3 text-sm text-slate-700">
              <p>
                {p.windows.map((w) => `${w.name}: ${p.unit === 'usd' ? usd(w.cap) : `${int(Number(w.cap))} ${p.unit}`}`).join(' · ')}
                {' · '}
                {p.models ? [...p.models].join(', ') : t('every model')}
                {p.tier ? ` · ${tierLabel(p.tier)}` : ''}
                {' · '}
                {p.overflow === 'balance' ? t('Billed to the balance') : t('Refused')}
              </p>
              <PlanEditor id={p.id} config={rawPlanOf(p)} />
            </CardBody>
          </Card>
        ))}
      </div>
    </>
  );
}
