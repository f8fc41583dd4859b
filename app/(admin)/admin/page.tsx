import type { Metadata } from 'next';
import Link from 'next/link';
import type { Breakdown } from '@/lib/admin/stats';
import { consoleOverview } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { cny, int, usd } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Card, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { Stat } from '@/components/ui/stat';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { serverT } from '@/lib/i18n/server';
import type { Phrase, Translate } from '@/lib/i18n/translate';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Operator overview')} · Model Gateway` };
}
export const dynamic = 'force-dynamic';

function Bars({ title, rows, t }: { title: string; rows: Breakdown[]; t: Translate }) {
  const max = rows.reduce((m, r) => (r.spendPico > m ? r.spendPico : m), 0n);
  return (
    <Card>
      <CardHeader title={title} description={t('Spend, last 30 days')} />
      {rows.length === 0 ? (
        <EmptyState title={t('No requests yet')} />
      ) : (
        <ul className="space-y-2 px-4 py-4 sm:px-5">
          {rows.map((r) => (
            <li key={r.key} className="text-sm">
              <div className="flex justify-between gap-2">
                <span className="truncate text-slate-700">{r.key}</span>
                <span className="tabular-nums text-slate-500">
                  {usd(r.spendPico)} · {t('{n} req', { n: int(r.requests) })}
                </span>
              </div>
              <div className="mt-1 h-1.5 rounded bg-slate-100">
                <div className="h-1.5 rounded bg-indigo-500" style={{ width: `${max > 0n ? Number((r.spendPico * 100n) / max) : 0}%` }} />
              </div>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

export default async function AdminOverviewPage() {
  await requireOperator();
  const [data, t] = await Promise.all([consoleOverview(), serverT()]);
  return (
    <>
      <PageHeader
        title={t('Overview')}
        description={t('Every account, every channel. Windows are UTC days; revenue is recharges (Stripe and codes), spend is usage.')}
      />
      <div className="grid gap-4 sm:grid-cols-3" data-testid="admin-windows">
        {data.windows.map((w) => (
          <Stat
            key={w.label}
            label={t(w.label as Phrase)}
            value={t('{n} requests', { n: int(w.requests) })}
            sub={
              <>
                {t('{n} failed', { n: int(w.failed) })} · {t('revenue {usd} / {cny}', { usd: usd(w.revenuePico), cny: cny(w.revenueCnyPico) })}
                <br />
                {t('spend {usd} / {cny}', { usd: usd(w.spendPico), cny: cny(w.spendCnyPico) })}
              </>
            }
          />
        ))}
      </div>
      <div className="mt-6 grid gap-4 lg:grid-cols-3">
        <Bars title={t('By model')} rows={data.byModel} t={t} />
        <Bars title={t('By channel')} rows={data.byChannel} t={t} />
        <Bars title={t('By tier')} rows={data.byTier} t={t} />
      </div>
      <div className="mt-6 grid gap-4 lg:grid-cols-2">
        <Card>
          <CardHeader title={t('Top accounts')} description={t('By spend, last 30 days')} />
          {data.top.length === 0 ? (
            <EmptyState title={t('No spend yet')} />
          ) : (
            <Table>
              <THead>
                <Tr>
                  <Th>{t('Account')}</Th>
                  <Th className="text-right">{t('Requests')}</Th>
                  <Th className="text-right">{t('Spend')}</Th>
                </Tr>
              </THead>
              <TBody>
                {data.top.map((a) => (
                  <Tr key={a.userId}>
                    <Td>
                      <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${a.userId}`}>
                        {a.email}
                      </Link>
                    </Td>
                    <Td className="text-right tabular-nums">{int(a.requests)}</Td>
                    <Td className="text-right tabular-nums">{usd(a.spendPico)}</Td>
                  </Tr>
                ))}
              </TBody>
            </Table>
          )}
        </Card>
        <Card>
          <CardHeader
            title={t('Channel health')}
            description={t('Last 5 minutes, every instance')}
            actions={
              <Link className="text-sm text-indigo-700 hover:underline" href="/admin/channels">
                {t('Manage')}
              </Link>
            }
          />
          <Table>
            <THead>
              <Tr>
                <Th>{t('Channel')}</Th>
                <Th>{t('State')}</Th>
                <Th className="text-right">{t('Errors')}</Th>
                <Th className="text-right">p50</Th>
              </Tr>
            </THead>
            <TBody>
              {data.channels.map((c) => (
                <Tr key={c.name}>
                  <Td>{c.name}</Td>
                  <Td>
                    {c.disabled ? (
                      <Badge tone="red">{t('disabled')}</Badge>
                    ) : c.health.state !== 'healthy' ? (
                      // Channel health (lib/channels/health.ts); the channels page says why.
                      <Badge tone={c.health.state === 'failed' ? 'red' : c.health.state === 'degraded' ? 'amber' : 'blue'}>{t(c.health.state)}</Badge>
                    ) : c.breakerOpen > 0 ? (
                      <Badge tone="amber">{t('breaker open')}</Badge>
                    ) : (
                      <Badge tone="green">{t('healthy')}</Badge>
                    )}
                  </Td>
                  <Td className="text-right tabular-nums">{(c.errorRate * 100).toFixed(1)}%</Td>
                  <Td className="text-right tabular-nums">{c.p50Ms === null ? '–' : `${c.p50Ms} ms`}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        </Card>
      </div>
    </>
  );
}
