import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { coded, type Phrase } from '@/lib/i18n/translate';
import { attemptReason } from '@/lib/i18n/codes';
import { LocalTime } from '@/components/ui/local-time';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { consoleLog } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { GatewayError } from '@/lib/errors';
import { cny, usd } from '@/lib/dashboard/format';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { Badge } from '@/components/ui/badge';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { channelLabel } from '@/lib/channels/labels';
import { priceBreakdownJson } from '@/lib/dashboard/serialize';
import { PriceBreakdown } from '@/components/dashboard/price-breakdown';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Request')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

interface AttemptRecord {
  channel: string | null;
  model: string;
  ok: boolean;
  status?: number;
  error?: string;
  ms?: number;
}

/** The gateway's attempt records (lib/gateway/context.ts); anything else in the column is left out. */
function attemptRecords(value: unknown): AttemptRecord[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((a): a is Record<string, unknown> => typeof a === 'object' && a !== null && !Array.isArray(a))
    .map((a) => ({
      channel: typeof a.channel === 'string' ? a.channel : null,
      model: typeof a.model === 'string' ? a.model : '–',
      ok: a.ok === true,
      status: typeof a.status === 'number' ? a.status : undefined,
      error: typeof a.error === 'string' ? a.error : undefined,
      ms: typeof a.ms === 'number' ? a.ms : undefined,
    }));
}

/** The internal name, with what users are shown for it. */
function channelName(name: string | null): string {
  return name === null ? '–' : `${name} (${channelLabel(name)})`;
}

export default async function AdminLogPage({ params }: { params: Promise<{ id: string }> }) {
  await requireOperator();
  const t = await serverT();
  const { id } = await params;
  const e = await consoleLog(decodeURIComponent(id)).catch((err: unknown) => {
    if (err instanceof GatewayError && err.code === 'not_found') notFound();
    throw err;
  });
  const served = e.outcome === 'ok' || e.outcome === 'client_closed';
  const attempts = attemptRecords(e.attempts);
  const rows: [string, React.ReactNode][] = (
    [
      ['Time', <LocalTime key="time" iso={e.createdAt.toISOString()} />],
      [
        'Account',
        <Link key="a" className="text-indigo-700 hover:underline" href={`/admin/accounts/${e.userId}`}>
          {e.email}
        </Link>,
      ],
      ['Endpoint', e.endpoint],
      ['Model asked', e.modelRequested ?? '–'],
      served ? ['Model served', e.modelServed ?? '–'] : ['Last model tried', e.modelServed ?? '–'],
      served ? ['Channel', channelName(e.channel)] : ['Last channel tried', channelName(e.channel ?? attempts.at(-1)?.channel ?? null)],
      ['Status', `${e.status} ${e.outcome}${e.errorCode ? ` (${e.errorCode})` : ''}`],
      [
        'Tokens',
        `${t('{i} in · {o} out', { i: e.promptTokens, o: e.completionTokens })}${e.cacheReadTokens ? ` · ${t('{n} cache read', { n: e.cacheReadTokens })}` : ''}${e.tokensEstimated ? ` ${t('(estimated)')}` : ''}`,
      ],
      ['Cost', `${usd(e.costUsd)} · ${cny(e.costCny)}`],
      ['Latency', `${e.latencyMs} ms${e.firstTokenMs !== null ? ` ${t('(first token {n} ms)', { n: e.firstTokenMs })}` : ''}`],
      ['Route', e.routeReason ?? '–'],
    ] satisfies [Phrase, React.ReactNode][]
  ).map(([k, v]) => [t(k), v]);
  return (
    <>
      <PageHeader title={t('Request')} description={<span className="font-mono text-xs">{e.id}</span>} />
      <Card>
        <CardBody>
          <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[12rem_1fr]">
            {rows.map(([k, v]) => (
              <div key={k} className="contents">
                <dt className="text-slate-500">{k}</dt>
                <dd className="text-slate-900">{v}</dd>
              </div>
            ))}
          </dl>
        </CardBody>
      </Card>
      <Card className="mt-6">
        <CardHeader title={t('Price breakdown')} description={t('Each token class at its rate, then any discount: the lines add up to the cost charged.')} />
        <PriceBreakdown breakdown={priceBreakdownJson(e)} t={t} />
      </Card>
      <Card className="mt-6" data-testid="attempts">
        <CardHeader title={t('Upstream attempts')} description={t('In order; the label in brackets is what the account sees.')} />
        {attempts.length === 0 ? (
          <CardBody>
            <p className="text-sm text-slate-500">{t('None: the request was answered before any upstream call.')}</p>
          </CardBody>
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>#</Th>
                <Th>{t('Channel (users see)')}</Th>
                <Th>{t('Model')}</Th>
                <Th>{t('Result')}</Th>
                <Th className="text-right">{t('HTTP status')}</Th>
                <Th>{t('Reason')}</Th>
                <Th className="text-right">{t('Time')}</Th>
              </Tr>
            </THead>
            <TBody>
              {attempts.map((a, i) => (
                <Tr key={i} data-testid="attempt-row">
                  <Td className="tabular-nums">{i + 1}</Td>
                  <Td>{channelName(a.channel)}</Td>
                  <Td className="font-mono text-xs">{a.model}</Td>
                  <Td>
                    <Badge tone={a.ok ? 'green' : 'red'}>{a.ok ? t('succeeded') : t('failed')}</Badge>
                  </Td>
                  <Td className="text-right tabular-nums">{a.status ?? '–'}</Td>
                  <Td className="text-slate-600">{a.error ? coded(t, attemptReason(a.error)) : '–'}</Td>
                  <Td className="text-right tabular-nums">{a.ms === undefined ? '–' : `${a.ms} ms`}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
    </>
  );
}
