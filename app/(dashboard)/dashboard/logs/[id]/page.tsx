import { serverT } from '@/lib/i18n/server';
import { coded, type Phrase, type Translate } from '@/lib/i18n/translate';
import { attemptReason } from '@/lib/i18n/codes';
import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { getLog, listKeyNames } from '@/lib/dashboard/queries';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { formatBoolean, formatMoney, int, latency, titleCase } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CopyButton } from '@/components/ui/copy-button';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { RouteBadge, StatusBadge } from '@/components/dashboard/log-cells';
import { LocalTime } from '@/components/ui/local-time';
import { PLAYGROUND_KEY_ID } from '@/lib/auth/playground';
import { cacheSavingPico, isResponseCacheHit } from '@/lib/cache/savings';
import { priceBreakdownJson } from '@/lib/dashboard/serialize';
import { PriceBreakdown } from '@/components/dashboard/price-breakdown';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Request')} · Model Gateway` };
}

function Fields({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <dl className="divide-y divide-slate-100 text-sm">
      {rows.map(([label, value]) => (
        <div key={label} className="grid grid-cols-[9rem_1fr] gap-3 py-2 first:pt-0 last:pb-0 sm:grid-cols-[11rem_1fr]">
          <dt className="text-slate-500">{label}</dt>
          <dd className="min-w-0 break-words text-slate-900">{value ?? <span className="text-slate-500">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

const none = <span className="text-slate-500">—</span>;

function cellText(value: unknown, t: Translate): ReactNode {
  if (value === null || value === undefined) return none;
  if (typeof value === 'boolean') return t(formatBoolean(value) as 'Yes' | 'No');
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  return <code className="font-mono text-xs">{JSON.stringify(value)}</code>;
}

/** The gateway's attempt record (lib/gateway/context.ts), in this order; fields it may add later follow, sorted. */
const knownColumns: { key: string; label: Phrase; render?: (v: unknown, t: Translate) => ReactNode }[] = [
  { key: 'channel', label: 'Provider' },
  { key: 'model', label: 'Model' },
  {
    key: 'ok',
    label: 'Result',
    render: (v, t) => (typeof v === 'boolean' ? <Badge tone={v ? 'green' : 'red'}>{v ? t('Succeeded') : t('Failed')}</Badge> : cellText(v, t)),
  },
  { key: 'status', label: 'HTTP status' },
  { key: 'error', label: 'Reason', render: (v, t) => (typeof v === 'string' ? coded(t, attemptReason(v)) : cellText(v, t)) },
  { key: 'ms', label: 'Time', render: (v, t) => (typeof v === 'number' ? latency(v) : cellText(v, t)) },
];

function attemptColumns(rows: Record<string, unknown>[], t: Translate) {
  const present = new Set(rows.flatMap((r) => Object.keys(r)));
  const known = knownColumns.filter((c) => present.has(c.key)).map((c) => ({ ...c, label: t(c.label) as string }));
  const extra = [...present]
    .filter((k) => !knownColumns.some((c) => c.key === k))
    .sort()
    .map((key) => ({ key, label: titleCase(key.replace(/_/g, ' ')), render: undefined }));
  return [...known, ...extra];
}

/** Attempts are recorded by the gateway as JSON: a table (cards on phones) when they are a list of records, raw JSON otherwise. */
function Attempts({ attempts, t }: { attempts: unknown; t: Translate }) {
  if (attempts === null || attempts === undefined || (Array.isArray(attempts) && attempts.length === 0)) {
    return <p className="px-4 py-4 text-sm text-slate-500 sm:px-5">{t('No upstream call was made for this request.')}</p>;
  }
  const records = Array.isArray(attempts) && attempts.every((a) => typeof a === 'object' && a !== null && !Array.isArray(a));
  if (!records) {
    return <pre className="overflow-x-auto px-4 py-4 font-mono text-xs text-slate-800 sm:px-5">{JSON.stringify(attempts, null, 2)}</pre>;
  }
  const rows = attempts as Record<string, unknown>[];
  const columns = attemptColumns(rows, t);
  const show = (c: (typeof columns)[number], r: Record<string, unknown>) => (c.render ? c.render(r[c.key], t) : cellText(r[c.key], t));
  return (
    <>
      <ol className="divide-y divide-slate-100 sm:hidden">
        {rows.map((r, i) => (
          <li key={i} className="px-4 py-3" data-testid="attempt-card">
            <p className="mb-1 text-xs font-medium text-slate-500">{t('Attempt {n}', { n: i + 1 })}</p>
            <Fields rows={columns.map((c) => [c.label, show(c, r)])} />
          </li>
        ))}
      </ol>
      <div className="hidden sm:block">
        <Table>
          <THead>
            <tr>
              <Th>#</Th>
              {columns.map((c) => (
                <Th key={c.key}>{c.label}</Th>
              ))}
            </tr>
          </THead>
          <TBody>
            {rows.map((r, i) => (
              <Tr key={i} data-testid="attempt-row">
                <Td className="tabular-nums text-slate-500">{i + 1}</Td>
                {columns.map((c) => (
                  <Td key={c.key} className={c.key === 'error' ? 'break-words' : 'whitespace-nowrap'}>
                    {show(c, r)}
                  </Td>
                ))}
              </Tr>
            ))}
          </TBody>
        </Table>
      </div>
    </>
  );
}

/** The provider of the last attempt, when the log's own channel is empty (every attempt failed). */
function lastAttemptProvider(attempts: unknown): string | null {
  const last: unknown = Array.isArray(attempts) ? attempts[attempts.length - 1] : undefined;
  const channel = typeof last === 'object' && last !== null ? (last as { channel?: unknown }).channel : undefined;
  return typeof channel === 'string' ? channel : null;
}

export default async function LogDetailPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requirePageAccount(`/dashboard/logs/${encodeURIComponent(id)}`);
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const [log, keys, t] = await Promise.all([getLog(user.id, id), listKeyNames(user.id), serverT()]);
  if (!log) notFound();
  const key = keys.find((k) => k.id === log.apiKeyId);
  const served = log.outcome === 'ok' || log.outcome === 'client_closed';

  return (
    <>
      <Link href="/dashboard/logs" className="text-sm text-slate-500 hover:text-slate-900">
        ← {t('Logs')}
      </Link>
      <div className="mb-6 mt-2 flex flex-wrap items-center gap-x-3 gap-y-2">
        <h1 className="text-2xl font-semibold tracking-tight text-slate-900">{t('Request')}</h1>
        <code className="break-all font-mono text-sm text-slate-600" data-testid="log-id">
          {log.id}
        </code>
        <CopyButton value={log.id} label={t('Copy id')} variant="ghost" />
        <StatusBadge status={log.status} outcome={log.outcome} />
      </div>

      <div className="grid grid-cols-1 gap-4 lg:grid-cols-2 [&>*]:min-w-0">
        <Card>
          <CardHeader title={t('Request')} />
          <CardBody>
            <Fields
              rows={[
                [t('Time'), <LocalTime iso={log.createdAt.toISOString()} className="tabular-nums" />],
                [t('Endpoint'), <code className="font-mono text-xs">{log.endpoint}</code>],
                [t('Streaming'), t(formatBoolean(log.stream) as 'Yes' | 'No')],
                [
                  t('API key'),
                  key ? `${key.name} (${key.display})` : log.apiKeyId === PLAYGROUND_KEY_ID ? t('Playground') : log.apiKeyId ? t('Deleted key') : null,
                ],
                [t('HTTP status'), <span className="tabular-nums">{log.status}</span>],
                [t('Outcome'), <code className="font-mono text-xs">{log.outcome}</code>],
                [t('Error code'), log.errorCode ? <code className="font-mono text-xs text-red-700">{log.errorCode}</code> : null],
                [t('Latency'), latency(log.latencyMs)],
                [t('Time to first token'), log.firstTokenMs !== null ? latency(log.firstTokenMs) : null],
              ]}
            />
          </CardBody>
        </Card>

        <div className="min-w-0 space-y-4">
          <Card>
            <CardHeader title={t('Routing')} />
            <CardBody>
              <Fields
                rows={[
                  [t('Model requested'), log.modelRequested],
                  [
                    served ? t('Model served') : t('Last model tried'),
                    log.modelServed ? (
                      <span className="flex flex-wrap items-center gap-2">
                        {log.modelServed} <RouteBadge entry={log} />
                      </span>
                    ) : served ? null : (
                      <span className="text-slate-500">{t('None: the request failed before reaching a model')}</span>
                    ),
                  ],
                  served
                    ? [t('Provider'), log.channel]
                    : [
                        t('Last provider tried'),
                        log.channel ?? lastAttemptProvider(log.attempts) ?? <span className="text-slate-500">{t('None: no provider was called')}</span>,
                      ],
                  ...(log.region ? ([[t('Region'), log.region]] as [string, ReactNode][]) : []),
                  [t('Route reason'), log.routeReason],
                ]}
              />
            </CardBody>
          </Card>

          <Card>
            <CardHeader title={t('Usage and cost')} />
            <CardBody>
              <Fields
                rows={[
                  [t('Prompt tokens'), <span className="tabular-nums">{int(log.promptTokens)}</span>],
                  [t('Completion tokens'), <span className="tabular-nums">{int(log.completionTokens)}</span>],
                  [t('Cache read tokens'), <span className="tabular-nums">{int(log.cacheReadTokens)}</span>],
                  [t('Cache write tokens'), <span className="tabular-nums">{int(log.cacheWriteTokens)}</span>],
                  [t('Saved by prompt cache'), <span className="tabular-nums">{formatMoney(cacheSavingPico(log.modelServed, log.cacheReadTokens))}</span>],
                  ...(isResponseCacheHit(log.routeReason) ? ([[t('Response cache'), t('Answered from the response cache')]] as [string, ReactNode][]) : []),
                  [
                    t('Token counts'),
                    log.tokensEstimated ? (
                      <span className="flex items-center gap-2">
                        <Badge tone="neutral">{t('estimated')}</Badge>
                        <span className="text-slate-500">{t('the upstream reported no usage')}</span>
                      </span>
                    ) : (
                      t('Reported by the upstream')
                    ),
                  ],
                  [
                    t('Cost (USD)'),
                    <span className="tabular-nums" data-testid="cost-usd">
                      {formatMoney(log.costUsd)}
                    </span>,
                  ],
                  [
                    t('Cost (CNY)'),
                    <span className="tabular-nums" data-testid="cost-cny">
                      {formatMoney(log.costCny, 'CNY')}
                    </span>,
                  ],
                  [t('Rate'), <span className="tabular-nums">{t('{rate} CNY per USD', { rate: log.cnyRate })}</span>],
                  [t('Paid by'), <span data-testid="billed-to">{log.billedTo === 'plan' ? t('Plan') : t('Balance')}</span>],
                ]}
              />
            </CardBody>
          </Card>
        </div>

        <Card className="lg:col-span-2">
          <CardHeader title={t('Price breakdown')} description={t('Each token class at its rate, then any discount: the lines add up to the cost charged.')} />
          <PriceBreakdown breakdown={priceBreakdownJson(log)} t={t} />
        </Card>

        <Card className="lg:col-span-2">
          <CardHeader title={t('Attempts')} description={t('Each upstream call made for this request, in order.')} />
          <Attempts attempts={log.attempts} t={t} />
        </Card>
      </div>
    </>
  );
}
