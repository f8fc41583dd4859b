import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import Link from 'next/link';
import { getOverview, type Overview } from '@/lib/dashboard/overview';
import { requirePageUser } from '@/lib/dashboard/session';
import { cny, formatBalance, formatDayLabel, int, tierLabel, toChartNumber, tokenCount, usd } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { Progress } from '@/components/ui/progress';
import { Stat } from '@/components/ui/stat';
import { UsageChart, type UsagePoint } from '@/components/dashboard/usage-chart';
import { FirstRunChecklist } from '@/components/dashboard/first-run-checklist';
import { firstRunState } from '@/lib/dashboard/first-run';
import { publicOrigin } from '@/lib/dashboard/origin';

export const metadata: Metadata = { title: 'Overview · Model Gateway' };

function chartData(o: Overview): UsagePoint[] {
  return o.daily.map((d) => ({
    date: d.date,
    label: formatDayLabel(d.date),
    spend: toChartNumber(d.spendUsd),
    spendLabel: usd(d.spendUsd),
    cnyLabel: cny(d.spendCny),
    requests: d.requests,
    failed: d.failed,
    tokens: d.promptTokens + d.completionTokens,
  }));
}

function TierCard({ o }: { o: Overview }) {
  const { limits, nextTier, account } = o;
  const figures = [
    { label: 'Requests / min', value: int(limits.rpm) },
    { label: 'Requests / hour', value: int(limits.rph) },
    { label: 'Tokens / day', value: limits.tokensPerDay === null ? 'Unlimited' : tokenCount(limits.tokensPerDay) },
    { label: 'Concurrent', value: int(limits.concurrency) },
  ];
  return (
    <Card data-testid="tier">
      <CardHeader
        title={
          <span className="flex items-center gap-2">
            Your tier <Badge tone="violet">{tierLabel(account.tier)}</Badge>
          </span>
        }
        description="Limits applied to every key of this account."
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
            <p className="text-slate-600">Your tier was set by the operator and does not change automatically.</p>
          ) : !nextTier ? (
            <p className="text-slate-600">You are on the highest tier.</p>
          ) : nextTier.promoteAtUsd === null ? (
            <p className="text-slate-600">
              <span className="font-medium text-slate-900">{tierLabel(nextTier.name)}</span> quotas are arranged by contact: write to us for custom
              limits.
            </p>
          ) : nextTier.remainingUsd === 0n ? (
            <p className="text-slate-600">
              You have reached the <span className="font-medium text-slate-900">{tierLabel(nextTier.name)}</span> threshold this month; the upgrade
              applies automatically.
            </p>
          ) : (
            <div className="space-y-2">
              <p className="text-slate-600">
                Spend <span className="font-medium text-slate-900">{usd(nextTier.promoteAtUsd)}</span> in a calendar month to move up to{' '}
                <span className="font-medium text-slate-900">{tierLabel(nextTier.name)}</span> automatically.
              </p>
              <Progress value={Number((o.month.spendUsd * 1000n) / nextTier.promoteAtUsd) / 1000} label={`Progress to ${tierLabel(nextTier.name)}`} />
              <p className="text-xs text-slate-500 tabular-nums">
                {usd(o.month.spendUsd)} spent this month · {usd(nextTier.remainingUsd ?? 0n)} to go
              </p>
            </div>
          )}
        </div>
      </CardBody>
    </Card>
  );
}

export default async function OverviewPage() {
  const user = await requirePageUser('/dashboard');
  const o = await getOverview(user.id);
  const [firstRun, origin, { t }] = await Promise.all([firstRunState(user.id, o.account.balanceUsd), publicOrigin(), currentMessages()]);
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
          label="Balance"
          value={formatBalance(o.account.balanceUsd)}
          sub={`${formatBalance(o.balanceCny, 'CNY')} at ${o.usdToCny} CNY/USD`}
          action={
            <Link href="/dashboard/billing" className="text-xs font-medium text-indigo-600 hover:text-indigo-500">
              Add credit
            </Link>
          }
        />
        <Stat testId="spend-month" label="Spend this month" value={usd(o.month.spendUsd)} sub={cny(o.month.spendCny)} />
        <Stat testId="spend-today" label="Spend today" value={usd(o.today.spendUsd)} sub={cny(o.today.spendCny)} />
        <Stat
          testId="requests-month"
          label="Requests this month"
          value={int(o.month.requests)}
          sub={o.month.failed ? `${int(o.month.failed)} failed` : 'No failures'}
        />
        <Stat testId="requests-today" label="Requests today" value={int(o.today.requests)} sub={o.today.failed ? `${int(o.today.failed)} failed` : 'No failures'} />
        <Stat
          testId="tokens-month"
          label="Tokens this month"
          value={int(monthTokens)}
          sub={`${int(o.month.promptTokens)} in · ${int(o.month.completionTokens)} out`}
        />
      </div>

      <div className="mt-4 grid gap-4 sm:mt-6 lg:grid-cols-3">
        <Card className="lg:col-span-2">
          <CardHeader
            title="Last 30 days"
            description={
              <span className="tabular-nums">
                {usd(totalDays)} spent · {int(requestsDays)} requests
              </span>
            }
            actions={
              <div className="flex items-center gap-3 text-xs text-slate-500">
                <span className="flex items-center gap-1.5">
                  <span className="h-2.5 w-2.5 rounded-sm bg-indigo-500" /> Spend (USD)
                </span>
                <span className="flex items-center gap-1.5">
                  <span className="h-0.5 w-3 bg-slate-900" /> Requests
                </span>
              </div>
            }
          />
          <CardBody>
            <UsageChart data={chartData(o)} />
          </CardBody>
        </Card>
        <TierCard o={o} />
      </div>
    </>
  );
}
