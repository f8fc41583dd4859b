import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { consoleLog } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { GatewayError } from '@/lib/errors';
import { cny, dateTime, usd } from '@/lib/dashboard/format';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';

export const metadata: Metadata = { title: 'Request · Operator console' };
export const dynamic = 'force-dynamic';

export default async function AdminLogPage({ params }: { params: Promise<{ id: string }> }) {
  await requireOperator();
  const { id } = await params;
  const e = await consoleLog(decodeURIComponent(id)).catch((err: unknown) => {
    if (err instanceof GatewayError && err.code === 'not_found') notFound();
    throw err;
  });
  const rows: [string, React.ReactNode][] = [
    ['Time', dateTime(e.createdAt)],
    [
      'Account',
      <Link key="a" className="text-indigo-700 hover:underline" href={`/admin/accounts/${e.userId}`}>
        {e.email}
      </Link>,
    ],
    ['Endpoint', e.endpoint],
    ['Model asked / served', `${e.modelRequested ?? '–'} / ${e.modelServed ?? '–'}`],
    ['Channel', e.channel ?? '–'],
    ['Status', `${e.status} ${e.outcome}${e.errorCode ? ` (${e.errorCode})` : ''}`],
    [
      'Tokens',
      `${e.promptTokens} in · ${e.completionTokens} out${e.cacheReadTokens ? ` · ${e.cacheReadTokens} cache read` : ''}${e.tokensEstimated ? ' (estimated)' : ''}`,
    ],
    ['Cost', `${usd(e.costUsd)} · ${cny(e.costCny)}`],
    ['Latency', `${e.latencyMs} ms${e.firstTokenMs !== null ? ` (first token ${e.firstTokenMs} ms)` : ''}`],
    ['Route', e.routeReason ?? '–'],
  ];
  return (
    <>
      <PageHeader title="Request" description={<span className="font-mono text-xs">{e.id}</span>} />
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
        <CardHeader title="Upstream attempts" />
        <CardBody>
          <pre className="overflow-auto text-xs" data-testid="attempts">
            {JSON.stringify(e.attempts, null, 2)}
          </pre>
        </CardBody>
      </Card>
    </>
  );
}
