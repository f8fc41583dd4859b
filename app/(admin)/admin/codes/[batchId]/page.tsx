import type { Metadata } from 'next';
import { LocalTime } from '@/components/ui/local-time';
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

export const metadata: Metadata = { title: 'Code batch · Operator console' };
export const dynamic = 'force-dynamic';

export default async function AdminBatchPage({ params }: { params: Promise<{ batchId: string }> }) {
  await requireOperator();
  const { batchId } = await params;
  const codes = await consoleBatchCodes(batchId).catch((err: unknown) => {
    if (err instanceof GatewayError && err.code === 'not_found') notFound();
    throw err;
  });
  return (
    <>
      <PageHeader title="Code batch" description={<span className="font-mono text-xs">{batchId}</span>} />
      <Card>
        <Table>
          <THead>
            <Tr>
              <Th>Code</Th>
              <Th className="text-right">Value</Th>
              <Th>State</Th>
              <Th>Redeemed by</Th>
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
                      redeemed <LocalTime iso={c.redeemedAt.toISOString()} />
                    </Badge>
                  ) : c.expiresAt && c.expiresAt.getTime() <= Date.now() ? (
                    <Badge tone="neutral">expired</Badge>
                  ) : (
                    <Badge tone="green">open</Badge>
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
