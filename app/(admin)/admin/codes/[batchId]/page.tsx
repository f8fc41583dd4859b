import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { PhraseTime } from '@/components/ui/phrase-time';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { consoleBatchCodes } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { GatewayError } from '@/lib/errors';
import { usd } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Code batch')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminBatchPage({ params }: { params: Promise<{ batchId: string }> }) {
  await requireOperator();
  const t = await serverT();
  const { batchId } = await params;
  const codes = await consoleBatchCodes(batchId).catch((err: unknown) => {
    if (err instanceof GatewayError && err.code === 'not_found') notFound();
    throw err;
  });
  return (
    <>
      <PageHeader title={t('Code batch')} description={<span className="font-mono text-xs">{batchId}</span>} />
      <Card>
        <Table>
          <THead>
            <Tr>
              <Th>{t('Redemption code')}</Th>
              <Th className="text-right">{t('Value')}</Th>
              <Th>{t('State')}</Th>
              <Th>{t('Redeemed by')}</Th>
            </Tr>
          </THead>
          <TBody>
            {codes.map((c) => (
              <Tr key={c.id} data-testid="code-row">
                <Td className="font-mono text-xs">GW-…{c.lastFour}</Td>
                <Td className="text-right tabular-nums">{usd(c.amountPico)}</Td>
                <Td>
                  {c.redeemedAt ? (
                    <Badge tone="blue">
                      <PhraseTime text={t('redeemed {at}')} at={c.redeemedAt} />
                    </Badge>
                  ) : c.expiresAt && c.expiresAt.getTime() <= Date.now() ? (
                    <Badge tone="neutral">{t('expired')}</Badge>
                  ) : (
                    <Badge tone="green">{t('open')}</Badge>
                  )}
                </Td>
                <Td>
                  {c.redeemedBy ? (
                    <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${c.redeemedBy}`}>
                      {c.redeemedByEmail ?? c.redeemedBy}
                    </Link>
                  ) : (
                    '–'
                  )}
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      </Card>
    </>
  );
}
