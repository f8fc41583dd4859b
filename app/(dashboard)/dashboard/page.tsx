import { serverT } from '@/lib/i18n/server';
import { PlanCard } from '@/components/dashboard/plan-card';
import { getConfig } from '@/lib/config';
import { planStatus } from '@/lib/plans/subscriptions';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import type { Messages } from '@/lib/i18n/messages';
import Link from 'next/link';
import { getOverview, type Overview } from '@/lib/dashboard/overview';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { dayLabel, type Translate } from '@/lib/i18n/translate';
import { cny, formatMoney, int, tierLabel, toChartNumber, tokenCount, usd } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { Progress } from '@/components/ui/progress';
import { Stat } from '@/components/ui/stat';
import { UsageBars, type UsagePoint } from '@/components/dashboard/usage-bars';
import { FirstRunChecklist } from '@/components/dashboard/first-run-checklist';
import { firstRunState } from '@/lib/dashboard/first-run';
import { publicOrigin } from '@/lib/http/origin';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Overview')} · Model Gateway` };
}

function chartData(o: Overview, tr: Translate): UsagePoint[] {
  return o.daily.map((d) => ({
    date: d.date,
    label: dayLabel(d.date, tr),
    spend: toChartNumber(d.spendUsd),
    spendLabel: usd(d.spendUsd),
    cnyLabel: cny(d.spendCny),
    requests: d.requests,
    failed: d.failed,
    tokens: d.promptTokens + d.completionTokens,
  }));
}

function TierCard({ o, t }: { o: Overview; t: Messages['overview'] }) {
  const { limits, nextTier, account } = o;
  const figures = [
    { label: t.rpm, value: int(limits.rpm) },
    { label: t.rph, value: int(limits.rph) },
    { label: t.tokensPerDay, value: limits.tokensPerDay === null ? t.unlimited : tokenCount(limits.tokensPerDay) },
    { label: t.concurrent, value: int(limits.concurrency) },
  ];
  return (
    <Card data-testid="tier">
      <CardHeader
        title={
          <span className="flex items-center gap-2">
            {t.yourTier} <Badge tone="violet">{tierLabel(account.tier)}</Badge>
          </span>
        }
        description={t.tierHint}
      />
      <CardBody className="space-y-5">
        <dl className="grid grid-cols-2 gap-x-4 gap-y-3">
          {figures.map((f) => (
            <div key={f.label}>
              <dt className="text-xs text-slate-500">{f.label}</dt>
              <dd className="text-lg font-semibold text-slate-900 tabular-nums">{f.value}</dd>
            </div>
          ))}
        </dl>
        <div className="border-t border-slate-100 pt-4 text-sm" data-testid="next-tier">
          {account.tierLocked ? (
            <p className="text-slate-600">{t.tierLocked}</p>
          ) : !nextTier ? (
            <p className="text-slate-600">{t.topTier}</p>
          ) : nextTier.promoteAtUsd === null ? (
            <p className="text-slate-600">{t.byContact(tierLabel(nextTier.name))}</p>
          ) : nextTier.remainingUsd === 0n ? (
            <p className="text-slate-600">{t.reached(tierLabel(nextTier.name))}</p>
          ) : (
            <div className="space-y-2">
              <p className="text-slate-600">{t.spendToReach(formatMoney(nextTier.promoteAtUsd), tierLabel(nextTier.name))}</p>
              <Progress value={Number((o.month.spendUsd * 1000n) / nextTier.promoteAtUsd) / 1000} label={t.progressTo(tierLabel(nextTier.name))} />
              <p className="text-xs text-slate-500 tabular-nums">{t.spentToGo(usd(o.month.spendUsd), usd(nextTier.remainingUsd ?? 0n))}</p>
            </div>
          )}
        </div>
      </CardBody>
    </Card>
  );
}

export default async function OverviewPage() {
  const user = await requirePageAccount('/dashboard');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const o = await getOverview(user.id);
  const [firstRun, origin, { t }, tr, plan] = await Promise.all([
    firstRunState(user.id, o.account.balanceUsd),
    publicOrigin(),
    currentMessages(),
    serverT(),
    planStatus(user.id),
  ]);
  const started = firstRun.hasKey && firstRun.hasCredit && firstRun.hasCall;
  const totalDays = o.daily.reduce((sum, d) => sum + d.spendUsd, 0n);
  const requestsDays = o.daily.reduce((sum, d) => sum + d.requests, 0);
  const monthTokens = o.month.promptTokens + o.month.completionTokens;

  return (
    <>
      <PageHeader title={t.pages.overview.title} description={t.pages.overview.description} />
      {!started && <FirstRunChecklist state={firstRun} origin={origin} t={t.firstRun} />}

      <div className="grid grid-cols-2 gap-3 sm:gap-4 lg:grid-cols-3">
        <Stat
          testId="balance"
          label={t.overview.balance}
          value={formatMoney(o.account.balanceUsd)}
          sub={`${formatMoney(o.balanceCny, 'CNY')} ${t.overview.atRate(o.usdToCny)}`}
          action={
            <Link href="/dashboard/billing" className="text-xs font-medium text-indigo-600 hover:text-indigo-500">
              {t.overview.addCredit}
            </Link>
          }
        />
        <Stat testId="spend-month" label={t.overview.spendMonth} value={usd(o.month.spendUsd)} sub={cny(o.month.spendCny)} />
        <Stat testId="spend-today" label={t.overview.spendToday} value={usd(o.today.spendUsd)} sub={cny(o.today.spendCny)} />
        <Stat
          testId="requests-month"
          label={t.overview.requestsMonth}
          value={int(o.month.requests)}
          sub={o.month.failed ? t.overview.failed(int(o.month.failed)) : t.overview.noFailures}
        />
        <Stat
          testId="requests-today"
          label={t.overview.requestsToday}
          value={int(o.today.requests)}
          sub={o.today.failed ? t.overview.failed(int(o.today.failed)) : t.overview.noFailures}
        />
        <Stat
          testId="tokens-month"
          label={t.overview.tokensMonth}
          value={int(monthTokens)}
          sub={t.overview.inOut(int(o.month.promptTokens), int(o.month.completionTokens))}
        />
      </div>

      <div className="mt-4 grid gap-4 sm:mt-6 lg:grid-cols-3">
        <Card className="lg:col-span-2">
          <CardHeader
            title={t.overview.last30}
            description={<span className="tabular-nums">{t.overview.spentRequests(usd(totalDays), int(requestsDays))}</span>}
            actions={
              <div className="flex items-center gap-3 text-xs text-slate-500">
                <span className="flex items-center gap-1.5">
                  <span className="h-2.5 w-2.5 rounded-sm bg-indigo-500" /> {t.overview.spendUsd}
                </span>
                <span className="flex items-center gap-1.5">
                  <span className="h-0.5 w-3 bg-slate-900" /> {t.overview.requests}
                </span>
              </div>
            }
          />
          <CardBody>
            <UsageBars data={chartData(o, tr)} t={tr} />
          </CardBody>
        </Card>
        <TierCard o={o} t={t.overview} />
      </div>
      {plan && (
        <div className="mt-4 sm:mt-6">
          <PlanCard status={plan} cfg={getConfig()} t={tr} />
        </div>
      )}
    </>
  );
}
