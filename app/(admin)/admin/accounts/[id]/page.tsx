import { getConfig } from '@/lib/config';
import { LocalTime } from '@/components/ui/local-time';
import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { notFound } from 'next/navigation';
import { consoleAccountDetail, consoleAudit } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { GatewayError } from '@/lib/errors';
import { tierLabel, usd } from '@/lib/dashboard/format';
import { AccountActions, RevokeKeyButton } from '@/components/admin/account-actions';
import { PlanActions } from '@/components/admin/plan-actions';
import { PlanCard } from '@/components/dashboard/plan-card';
import { planStatus } from '@/lib/plans/subscriptions';
import { Badge } from '@/components/ui/badge';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { Stat } from '@/components/ui/stat';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { recentMonths } from '@/lib/statements/statement';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Account')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminAccountPage({ params }: { params: Promise<{ id: string }> }) {
  await requireOperator();
  const t = await serverT();
  const { id } = await params;
  const detail = await consoleAccountDetail(id).catch((err: unknown) => {
    if (err instanceof GatewayError && err.code === 'not_found') notFound();
    throw err;
  });
  const [audit, plan] = await Promise.all([consoleAudit({ targetType: 'account', targetId: id, limit: 10 }), planStatus(id)]);
  const { account } = detail;
  return (
    <>
      <PageHeader title={account.email} description={<span className="font-mono text-xs">{account.id}</span>} />
      <div className="grid gap-4 sm:grid-cols-3">
        <Stat label={t('Balance')} value={<span data-testid="admin-balance">{usd(account.balancePico)}</span>} />
        <Stat label={t('Tier')} value={tierLabel(account.tier)} sub={account.tierLocked ? t('pinned by an operator') : t('automatic promotion')} />
        <Stat
          label={t('Status')}
          value={<span data-testid="admin-status">{t(account.status === 'active' ? 'active' : 'suspended')}</span>}
          sub={
            <>
              {account.role === 'admin' ? <Badge tone="amber">{t('admin')}</Badge> : t('user')}
              {account.limits ? ` · ${t('custom limits {limits}', { limits: JSON.stringify(account.limits) })}` : ''}
            </>
          }
        />
      </div>
      {plan && (
        <div className="mt-6">
          <PlanCard status={plan} cfg={getConfig()} t={t} />
        </div>
      )}
      <Card className="mt-6">
        <CardHeader title={t('Actions')} description={t('Same effect as the admin CLI, on every instance at once; each is written to the audit log.')} />
        <CardBody>
          <AccountActions
            id={account.id}
            tier={account.tier}
            pinned={account.tierLocked}
            status={account.status}
            role={account.role}
            region={account.region}
            regions={[...new Set(getConfig().channels.flatMap((c) => (c.region ? [c.region] : [])))].sort()}
            limits={account.limits && typeof account.limits === 'object' && !Array.isArray(account.limits) ? (account.limits as Record<string, number>) : null}
          />
          <PlanActions
            id={account.id}
            plans={[...getConfig().plans.values()].filter((p) => !p.retired).map((p) => ({ id: p.id, name: p.name }))}
            current={plan?.plan.id ?? null}
          />
        </CardBody>
      </Card>
      <Card className="mt-6" data-testid="admin-statements">
        <CardHeader title={t('Monthly statements')} description={t('UTC months, exact sums of the ledger; the same statement the account sees.')} />
        <ul className="grid gap-x-6 gap-y-1 px-4 py-3 text-sm sm:grid-cols-3 sm:px-5">
          {recentMonths(new Date()).map((m) => (
            <li key={m} className="flex gap-3 tabular-nums">
              <span className="w-16 text-slate-600">{m}</span>
              {(['pdf', 'csv', 'json'] as const).map((ext) => (
                <a key={ext} href={`/api/admin/accounts/${account.id}/statements/${m}.${ext}`} className="font-medium text-indigo-700 underline">
                  {ext.toUpperCase()}
                </a>
              ))}
            </li>
          ))}
        </ul>
      </Card>
      <Card className="mt-6">
        <CardHeader title={t('API keys')} />
        {detail.keys.length === 0 ? (
          <EmptyState title={t('No keys')} />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>{t('Name')}</Th>
                <Th>{t('Key')}</Th>
                <Th>{t('Last used')}</Th>
                <Th />
              </Tr>
            </THead>
            <TBody>
              {detail.keys.map((k) => (
                <Tr key={k.id} data-testid="admin-key-row">
                  <Td>{k.name}</Td>
                  <Td className="font-mono text-xs">{k.display}</Td>
                  <Td>{k.last_used_at ? <LocalTime iso={k.last_used_at} /> : t('never')}</Td>
                  <Td className="text-right">
                    {k.revoked ? <Badge tone="red">{t('revoked')}</Badge> : <RevokeKeyButton accountId={account.id} keyId={k.id} />}
                  </Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
      <div className="mt-6 grid gap-4 lg:grid-cols-2">
        <Card>
          <CardHeader title={t('Recent requests')} />
          {detail.requests.length === 0 ? (
            <EmptyState title={t('No requests yet')} />
          ) : (
            <Table>
              <THead>
                <Tr>
                  <Th>{t('Time')}</Th>
                  <Th>{t('Model')}</Th>
                  <Th>{t('Status')}</Th>
                  <Th className="text-right">{t('Cost')}</Th>
                </Tr>
              </THead>
              <TBody>
                {detail.requests.map((r) => (
                  <Tr key={r.id}>
                    <Td className="whitespace-nowrap">
                      <LocalTime iso={r.createdAt.toISOString()} />
                    </Td>
                    <Td>{r.modelServed ?? r.modelRequested ?? '–'}</Td>
                    <Td>{r.status}</Td>
                    <Td className="text-right tabular-nums">{usd(r.costPico)}</Td>
                  </Tr>
                ))}
              </TBody>
            </Table>
          )}
        </Card>
        <Card>
          <CardHeader title={t('Ledger')} />
          {detail.ledger.length === 0 ? (
            <EmptyState title={t('No entries')} />
          ) : (
            <Table>
              <THead>
                <Tr>
                  <Th>{t('Time')}</Th>
                  <Th>{t('Kind')}</Th>
                  <Th className="text-right">{t('Amount')}</Th>
                  <Th>{t('Note')}</Th>
                </Tr>
              </THead>
              <TBody>
                {detail.ledger.map((e) => (
                  <Tr key={e.id.toString()} data-testid="admin-ledger-row">
                    <Td className="whitespace-nowrap">
                      <LocalTime iso={e.createdAt.toISOString()} />
                    </Td>
                    <Td>{e.kind}</Td>
                    <Td className="text-right tabular-nums">{usd(e.amountPico)}</Td>
                    <Td className="text-slate-500">{e.note ?? e.reference ?? ''}</Td>
                  </Tr>
                ))}
              </TBody>
            </Table>
          )}
        </Card>
      </div>
      <Card className="mt-6">
        <CardHeader title={t('Audit log')} description={t('Operator actions on this account')} />
        {audit.length === 0 ? (
          <EmptyState title={t('No operator actions yet')} />
        ) : (
          <Table>
            <TBody>
              {audit.map((a) => (
                <Tr key={a.id.toString()}>
                  <Td className="whitespace-nowrap">
                    <LocalTime iso={a.createdAt.toISOString()} />
                  </Td>
                  <Td>{a.actor}</Td>
                  <Td>{a.action}</Td>
                  <Td className="font-mono text-xs text-slate-500">{JSON.stringify(a.after)}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
    </>
  );
}
