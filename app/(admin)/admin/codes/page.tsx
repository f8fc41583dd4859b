import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import Link from 'next/link';
import { consoleBatches } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { date, usd } from '@/lib/dashboard/format';
import { CodeBatchForm } from '@/components/admin/code-batch-form';
import { getConfig } from '@/lib/config';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Redemption codes')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminCodesPage() {
  await requireOperator();
  const [batches, t] = await Promise.all([consoleBatches(), serverT()]);
  return (
    <>
      <PageHeader
        title={t('Redemption codes')}
        description={t('Prepaid balance for customers who cannot pay by card. Codes are stored hashed: export them when you create them.')}
      />
      <Card>
        <CardHeader title={t('New batch')} />
        <CardBody>
          <CodeBatchForm plans={[...getConfig().plans.values()].map((p) => ({ id: p.id, name: p.name }))} />
        </CardBody>
      </Card>
      <Card className="mt-6">
        <CardHeader title={t('Batches')} />
        {batches.length === 0 ? (
          <EmptyState title={t('No codes yet')} />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>{t('Created')}</Th>
                <Th className="text-right">{t('Value')}</Th>
                <Th className="text-right">{t('Redeemed')}</Th>
                <Th>{t('Expires')}</Th>
                <Th>{t('By')}</Th>
              </Tr>
            </THead>
            <TBody>
              {batches.map((b) => (
                <Tr key={b.batchId} data-testid="batch-row">
                  <Td>
                    <Link className="text-indigo-700 hover:underline" href={`/admin/codes/${b.batchId}`}>
                      {date(b.createdAt)}
                    </Link>
                  </Td>
                  <Td className="text-right tabular-nums">{usd(b.amountPico)}</Td>
                  <Td className="text-right tabular-nums" data-testid="batch-redeemed">
                    {b.redeemed} / {b.count}
                  </Td>
                  <Td>{b.expiresAt ? date(b.expiresAt) : t('never')}</Td>
                  <Td>{b.createdBy}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
    </>
  );
}
