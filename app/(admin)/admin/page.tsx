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

export const metadata: Metadata = { title: 'Operator overview · Model Gateway' };
export const dynamic = 'force-dynamic';

function Bars({ title, rows }: { title: string; rows: Breakdown[] }) {
  const max = rows.reduce((m, r) => (r.spendPico > m ? r.spendPico : m), 0n);
  return (
    <Card>
      <CardHeader title={title} description="Spend, last 30 days" />
      {rows.length === 0 ? (
        <EmptyState title="No requests yet" />
      ) : (
        <ul className="space-y-2 px-4 py-4 sm:px-5">
          {rows.map((r) => (
            <li key={r.key} className="text-sm">
              <div className="flex justify-between gap-2">
                <span className="truncate text-slate-700">{r.key}</span>
                <span className="tabular-nums text-slate-500">
                  {usd(r.spendPico)} · {int(r.requests)} req
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
  const data = await consoleOverview();
  return (
    <>
      <PageHeader title="Overview" description="Every account, every channel. Windows are UTC days; revenue is recharges (Stripe and codes), spend is usage." />
      <div className="grid gap-4 sm:grid-cols-3" data-testid="admin-windows">
        {data.windows.map((w) => (
          <Stat
            key={w.label}
            label={w.label}
            value={`${int(w.requests)} requests`}
            sub={
              <>
                {int(w.failed)} failed · revenue {usd(w.revenuePico)} / {cny(w.revenueCnyPico)}
                <br />
                spend {usd(w.spendPico)} / {cny(w.spendCnyPico)}
              </>
            }
          />
        ))}
      </div>
      <div className="mt-6 grid gap-4 lg:grid-cols-3">
        <Bars title="By model" rows={data.byModel} />
        <Bars title="By channel" rows={data.byChannel} />
        <Bars title="By tier" rows={data.byTier} />
      </div>
      <div className="mt-6 grid gap-4 lg:grid-cols-2">
        <Card>
          <CardHeader title="Top accounts" description="By spend, last 30 days" />
          {data.top.length === 0 ? (
            <EmptyState title="No spend yet" />
          ) : (
            <Table>
              <THead>
                <Tr>
                  <Th>Account</Th>
                  <Th className="text-right">Requests</Th>
                  <Th className="text-right">Spend</Th>
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
            title="Channel health"
            description="Last 5 minutes, every instance"
            actions={
              <Link className="text-sm text-indigo-700 hover:underline" href="/admin/channels">
                Manage
              </Link>
            }
          />
          <Table>
            <THead>
              <Tr>
                <Th>Channel</Th>
                <Th>State</Th>
                <Th className="text-right">Errors</Th>
                <Th className="text-right">p50</Th>
              </Tr>
            </THead>
            <TBody>
              {data.channels.map((c) => (
                <Tr key={c.name}>
                  <Td>{c.name}</Td>
                  <Td>
                    {c.disabled ? (
                      <Badge tone="red">disabled</Badge>
                    ) : c.health.state !== 'healthy' ? (
                      // Channel health (lib/channels/health.ts); the channels page says why.
                      <Badge tone={c.health.state === 'failed' ? 'red' : c.health.state === 'degraded' ? 'amber' : 'blue'}>{c.health.state}</Badge>
                    ) : c.breakerOpen > 0 ? (
                      <Badge tone="amber">breaker open</Badge>
                    ) : (
                      <Badge tone="green">healthy</Badge>
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
