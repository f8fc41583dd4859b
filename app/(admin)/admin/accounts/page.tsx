import type { Metadata } from 'next';
import Link from 'next/link';
import { consoleSearchAccounts } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { date, tierLabel, usd } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Input } from '@/components/ui/input';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { serverT } from '@/lib/i18n/server';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Accounts')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminAccountsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireOperator();
  const sp = await searchParams;
  const q = typeof sp.q === 'string' ? sp.q : '';
  const [accounts, t] = await Promise.all([consoleSearchAccounts(q), serverT()]);
  return (
    <>
      <PageHeader title={t('Accounts')} description={t('Search by email (any part) or paste an account id.')} />
      <form className="mb-4 flex gap-2" action="/admin/accounts">
        <Input name="q" defaultValue={q} placeholder={t('email or id')} aria-label={t('Search accounts')} data-testid="account-search" className="max-w-md" />
        <Button type="submit" variant="secondary">
          {t('Search')}
        </Button>
      </form>
      <Card>
        {accounts.length === 0 ? (
          <EmptyState title={t('No account matches')} />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>{t('Email')}</Th>
                <Th>{t('Tier')}</Th>
                <Th>{t('Status')}</Th>
                <Th className="text-right">{t('Balance')}</Th>
                <Th>{t('Created')}</Th>
              </Tr>
            </THead>
            <TBody>
              {accounts.map((a) => (
                <Tr key={a.id} data-testid="account-row">
                  <Td>
                    <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${a.id}`}>
                      {a.email}
                    </Link>
                    {a.role === 'admin' && (
                      <Badge tone="amber" className="ml-2">
                        {t('admin')}
                      </Badge>
                    )}
                  </Td>
                  <Td>
                    {tierLabel(a.tier)}
                    {a.tierLocked && <span className="ml-1 text-xs text-slate-500">{t('(pinned)')}</span>}
                  </Td>
                  <Td>{a.status === 'active' ? <Badge tone="green">{t('active')}</Badge> : <Badge tone="red">{t('suspended')}</Badge>}</Td>
                  <Td className="text-right tabular-nums">{usd(a.balancePico)}</Td>
                  <Td>{date(a.createdAt)}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
    </>
  );
}
