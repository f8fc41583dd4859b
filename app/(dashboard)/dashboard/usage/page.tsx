import { serverT } from '@/lib/i18n/server';
import { dayLabel, type Phrase, type Translate } from '@/lib/i18n/translate';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import Link from 'next/link';
import { GatewayError } from '@/lib/errors';
import { requirePageUser } from '@/lib/dashboard/session';
import { localToday, parseUsageQuery, usageReport, type UsageGroup, type UsageQuery, type UsageReport } from '@/lib/dashboard/usage';
import { isTimeZone } from '@/lib/dashboard/filters';
import { cookies } from 'next/headers';
import type { UsageTotals } from '@/lib/dashboard/queries';
import { cny, int, toChartNumber, usd } from '@/lib/dashboard/format';
import { Alert } from '@/components/ui/alert';
import { buttonClass } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CacheSavingsCard } from '@/components/dashboard/cache-savings';
import { cacheSavingsByDay } from '@/lib/cache/savings';
import { EmptyState } from '@/components/ui/empty-state';
import { Input, Label, Select } from '@/components/ui/input';
import { PageHeader } from '@/components/ui/page-header';
import { Stat } from '@/components/ui/stat';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import type { BreakdownPoint, BreakdownSeries } from '@/components/dashboard/usage-breakdown-chart';
import { LazyUsageBreakdownChart } from '@/components/dashboard/usage-breakdown-chart-lazy';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Usage')} · Model Gateway` };
}

type SearchParams = Record<string, string | string[] | undefined>;
type Metric = 'spend' | 'requests' | 'tokens' | 'failed';

const metrics: { id: Metric; label: Phrase }[] = [
  { id: 'spend', label: 'Spend (USD)' },
  { id: 'requests', label: 'Requests' },
  { id: 'tokens', label: 'Tokens' },
  { id: 'failed', label: 'Failed requests' },
];

// Colour-blind-safe enough, distinct on white; the last one is "Other".
const PALETTE = ['#4f46e5', '#0891b2', '#d97706', '#db2777', '#059669', '#7c3aed', '#64748b'];
const MAX_SERIES = 6;
const DAY_MS = 86_400_000;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

function metricValue(t: UsageTotals, metric: Metric): number {
  if (metric === 'spend') return toChartNumber(t.spendUsd);
  if (metric === 'requests') return t.requests;
  if (metric === 'failed') return t.failed;
  return t.promptTokens + t.completionTokens;
}

function metricText(t: UsageTotals, metric: Metric): string {
  if (metric === 'spend') return usd(t.spendUsd);
  if (metric === 'requests') return int(t.requests);
  if (metric === 'failed') return int(t.failed);
  return int(t.promptTokens + t.completionTokens);
}

function chart(report: UsageReport, metric: Metric, tr: Translate): { data: BreakdownPoint[]; series: BreakdownSeries[] } {
  if (report.query.groupBy === 'none') {
    const series = [{ id: 'all', label: tr(metrics.find((m) => m.id === metric)!.label), color: PALETTE[0] }];
    return {
      series,
      data: report.days.map((d) => ({
        date: d.date,
        label: dayLabel(d.date, tr),
        values: { all: metricValue(d, metric) },
        texts: { all: metricText(d, metric) },
        totalText: metricText(d, metric),
      })),
    };
  }
  const top = report.groups.slice(0, report.groups.length > MAX_SERIES ? MAX_SERIES - 1 : MAX_SERIES);
  const topKeys = new Set(top.map((g) => g.key));
  const series: BreakdownSeries[] = top.map((g, i) => ({ id: `g${i}`, label: g.label, color: PALETTE[i] }));
  const hasOther = report.groups.length > top.length;
  if (hasOther) series.push({ id: 'other', label: tr('Other'), color: PALETTE[PALETTE.length - 1] });
  const idOf = new Map(top.map((g, i) => [g.key, `g${i}`]));
  const data = report.days.map((d) => {
    const values: Record<string, number> = {};
    const texts: Record<string, string> = {};
    const other = d.groups.filter((g) => !topKeys.has(g.key));
    for (const g of d.groups) {
      const id = idOf.get(g.key);
      if (!id) continue;
      values[id] = metricValue(g, metric);
      texts[id] = metricText(g, metric);
    }
    if (other.length) {
      const sum = other.reduce<UsageTotals>(
        (a, g) => ({
          requests: a.requests + g.requests,
          failed: a.failed + g.failed,
          spendUsd: a.spendUsd + g.spendUsd,
          spendCny: a.spendCny + g.spendCny,
          promptTokens: a.promptTokens + g.promptTokens,
          completionTokens: a.completionTokens + g.completionTokens,
        }),
        { requests: 0, failed: 0, spendUsd: 0n, spendCny: 0n, promptTokens: 0, completionTokens: 0 },
      );
      values.other = metricValue(sum, metric);
      texts.other = metricText(sum, metric);
    }
    return { date: d.date, label: dayLabel(d.date, tr), values, texts, totalText: metricText(d, metric) };
  });
  return { data, series };
}

/** The report's own words for groups without a name (no member, a deleted project…) in the reader's language. */
const FIXED_LABELS = new Set<string>(['No member', 'Former member', 'No project', 'Deleted project', 'Deleted key'] satisfies Phrase[]);
function withReadableLabels(r: UsageReport, tr: Translate): UsageReport {
  const read = <G extends { label: string }>(g: G): G => (FIXED_LABELS.has(g.label) ? { ...g, label: tr(g.label as Phrase) } : g);
  return { ...r, groups: r.groups.map(read), days: r.days.map((d) => ({ ...d, groups: d.groups.map(read) })) };
}

function hrefFor(q: UsageQuery, metric: Metric, extra: Partial<{ from: string; to: string; group_by: string; metric: string }> = {}) {
  const params = new URLSearchParams({ from: q.from, to: q.to, group_by: q.groupBy === 'none' ? 'day' : q.groupBy, metric, ...extra });
  return `/dashboard/usage?${params}`;
}

function GroupRow({ g, testId }: { g: UsageGroup | (UsageTotals & { label: string; key: string }); testId: string }) {
  return (
    <Tr data-testid={testId}>
      <Td className="max-w-[10rem] truncate font-medium text-slate-900 sm:max-w-xs" title={g.label}>
        {g.label}
      </Td>
      <Td className="whitespace-nowrap text-right tabular-nums">
        <div className="text-slate-900">{usd(g.spendUsd)}</div>
        <div className="text-xs text-slate-600">{cny(g.spendCny)}</div>
      </Td>
      <Td className="text-right tabular-nums">{int(g.requests)}</Td>
      <Td className="hidden text-right tabular-nums sm:table-cell">{g.failed ? <span className="text-red-700">{int(g.failed)}</span> : '0'}</Td>
      <Td className="hidden whitespace-nowrap text-right tabular-nums md:table-cell">
        {int(g.promptTokens)} / {int(g.completionTokens)}
      </Td>
    </Tr>
  );
}

/** Called, not rendered as a component: Table reads its column labels (for phones) from a THead child. */
function totalsHead(first: string, tr: Translate) {
  return (
    <THead>
      <tr>
        <Th>{first}</Th>
        <Th className="text-right">{tr('Spend')}</Th>
        <Th className="text-right">{tr('Requests')}</Th>
        <Th className="hidden text-right sm:table-cell">{tr('Failed')}</Th>
        <Th className="hidden text-right md:table-cell">{tr('Tokens in / out')}</Th>
      </tr>
    </THead>
  );
}

export default async function UsagePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const user = await requirePageUser('/dashboard/usage');
  const sp = await searchParams;
  const params = new URLSearchParams();
  for (const name of ['from', 'to', 'group_by', 'tz']) {
    const v = first(sp[name]);
    if (v) params.set(name, v);
  }
  // Days are the viewer's (the zone every time on the page is shown in; the browser keeps it in a cookie).
  const rawZone = (await cookies()).get('tz')?.value;
  const zoneCookie = rawZone?.includes('%') ? decodeURIComponent(rawZone) : rawZone;
  if (!params.has('tz') && zoneCookie && isTimeZone(zoneCookie)) params.set('tz', zoneCookie);
  const metricParam = first(sp.metric);
  const metric: Metric = metrics.some((m) => m.id === metricParam) ? (metricParam as Metric) : 'spend';

  let query: UsageQuery;
  let problem: string | null = null;
  try {
    query = parseUsageQuery(params);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    problem = err.message;
    query = parseUsageQuery(new URLSearchParams());
  }
  const [raw, { t }, tr, savings] = await Promise.all([
    usageReport(user.id, query),
    currentMessages(),
    serverT(),
    cacheSavingsByDay(user.id, query.from, query.to),
  ]);
  const report = withReadableLabels(raw, tr);
  const { data, series } = chart(report, metric, tr);
  const today = localToday(new Date(), query.tz ?? 'UTC');
  const day = (offset: number) => new Date(today.getTime() - offset * DAY_MS).toISOString().slice(0, 10);
  const monthStart = `${day(0).slice(0, 8)}01`;
  const presets = [
    { label: tr('7 days'), from: day(6), to: day(0) },
    { label: tr('30 days'), from: day(29), to: day(0) },
    { label: tr('90 days'), from: day(89), to: day(0) },
    { label: tr('This month'), from: monthStart, to: day(0) },
  ];
  const groupLabel = tr(
    query.groupBy === 'model'
      ? 'Model'
      : query.groupBy === 'key'
        ? 'API key'
        : query.groupBy === 'member'
          ? 'Member'
          : query.groupBy === 'project'
            ? 'Project'
            : 'Day',
  );
  const byGroup = tr(
    query.groupBy === 'model' ? 'by model' : query.groupBy === 'member' ? 'by member' : query.groupBy === 'project' ? 'by project' : 'by api key',
  );
  const metricLabel = tr(metrics.find((m) => m.id === metric)!.label);
  const exportQuery = new URLSearchParams({ from: query.from, to: query.to, group_by: query.groupBy === 'none' ? 'day' : query.groupBy, tz: report.zone });
  const daysWithUse = report.days.filter((d) => d.requests > 0).reverse();

  return (
    <>
      <PageHeader title={t.pages.usage.title} description={t.pages.usage.description} />

      <Card className="mb-4 px-4 py-4 sm:px-5">
        <form method="get" action="/dashboard/usage" className="grid grid-cols-2 gap-3 sm:flex sm:flex-wrap sm:items-end" data-testid="usage-form">
          <div className="space-y-1.5">
            <Label htmlFor="usage-from">{tr('From')}</Label>
            <Input id="usage-from" name="from" type="date" defaultValue={query.from} required />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="usage-to">{tr('To')}</Label>
            <Input id="usage-to" name="to" type="date" defaultValue={query.to} required />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="usage-group">{tr('Break down by')}</Label>
            <Select id="usage-group" name="group_by" defaultValue={query.groupBy === 'none' ? 'day' : query.groupBy}>
              <option value="day">{tr('Nothing (days)')}</option>
              <option value="model">{tr('Model')}</option>
              <option value="key">{tr('API key')}</option>
              <option value="member">{tr('Member')}</option>
              <option value="project">{tr('Project')}</option>
            </Select>
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="usage-metric">{tr('Chart')}</Label>
            <Select id="usage-metric" name="metric" defaultValue={metric}>
              {metrics.map((m) => (
                <option key={m.id} value={m.id}>
                  {tr(m.label)}
                </option>
              ))}
            </Select>
          </div>
          <div className="col-span-2 flex flex-wrap gap-2">
            <button type="submit" className={buttonClass({ size: 'md' })} data-testid="usage-apply">
              {tr('Apply')}
            </button>
            <a href={`/api/usage/export?${exportQuery}`} className={buttonClass({ variant: 'secondary' })} data-testid="usage-export" download>
              {tr('Export CSV')}
            </a>
          </div>
        </form>
        <div className="mt-3 flex flex-wrap gap-x-3 gap-y-1 text-sm">
          {presets.map((p) => (
            <Link key={p.label} href={hrefFor(query, metric, { from: p.from, to: p.to })} className="font-medium text-indigo-700 hover:text-indigo-600">
              {p.label}
            </Link>
          ))}
        </div>
      </Card>

      {problem && (
        <Alert tone="error" className="mb-4" title={tr('This range is not valid; showing the last 30 days.')}>
          {problem}
        </Alert>
      )}

      <div className="grid grid-cols-2 gap-3 sm:gap-4 lg:grid-cols-4">
        <Stat testId="usage-spend" label={tr('Spend')} value={usd(report.totals.spendUsd)} sub={cny(report.totals.spendCny)} />
        <Stat
          testId="usage-requests"
          label={tr('Requests')}
          value={int(report.totals.requests)}
          sub={report.totals.failed ? t.overview.failed(int(report.totals.failed)) : t.overview.noFailures}
        />
        <Stat testId="usage-tokens-in" label={tr('Tokens in')} value={int(report.totals.promptTokens)} />
        <Stat testId="usage-tokens-out" label={tr('Tokens out')} value={int(report.totals.completionTokens)} />
      </div>

      <Card className="mt-4 sm:mt-6">
        <CardHeader
          title={
            query.groupBy === 'none' ? tr('{metric} per day', { metric: metricLabel }) : tr('{metric} per day, {by}', { metric: metricLabel, by: byGroup })
          }
          description={<span className="tabular-nums">{tr('{from} to {to} ({zone})', { from: query.from, to: query.to, zone: report.zone })}</span>}
        />
        <CardBody>
          <LazyUsageBreakdownChart
            data={data}
            series={series}
            money={metric === 'spend'}
            description={tr('Stacked bar chart of {metric} per day from {from} to {to}; the same figures are in the tables below.', {
              metric: metricLabel,
              from: query.from,
              to: query.to,
            })}
          />
        </CardBody>
      </Card>

      {query.groupBy !== 'none' && (
        <Card className="mt-4 sm:mt-6">
          <CardHeader
            title={tr(
              query.groupBy === 'model' ? 'By model' : query.groupBy === 'member' ? 'By member' : query.groupBy === 'project' ? 'By project' : 'By api key',
            )}
            description={tr('Totals over the range, highest spend first.')}
          />
          {report.groups.length === 0 ? (
            <EmptyState title={tr('No requests in this range')} />
          ) : (
            <Table>
              {totalsHead(groupLabel, tr)}
              <TBody>
                {report.groups.map((g) => (
                  <GroupRow key={g.key} g={g} testId="usage-group-row" />
                ))}
              </TBody>
            </Table>
          )}
        </Card>
      )}

      <Card className="mt-4 sm:mt-6">
        <CardHeader title={tr('By day')} description={tr('Days with requests, newest first.')} />
        {daysWithUse.length === 0 ? (
          <EmptyState title={tr('No requests in this range')}>{tr('Requests made with your API keys are counted here within a second or two.')}</EmptyState>
        ) : (
          <Table>
            {totalsHead(tr('Day ({zone})', { zone: report.zone }), tr)}
            <TBody>
              {daysWithUse.map((d) => (
                <GroupRow key={d.date} g={{ ...d, key: d.date, label: d.date }} testId="usage-day-row" />
              ))}
            </TBody>
          </Table>
        )}
      </Card>
      <CacheSavingsCard savings={savings} tr={tr} />
    </>
  );
}
