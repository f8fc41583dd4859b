import { LocalTime } from '@/components/ui/local-time';
import type { Metadata } from 'next';
import { consoleAudit } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export const metadata: Metadata = { title: 'Audit log · Operator console' };
export const dynamic = 'force-dynamic';

export default async function AdminAuditPage() {
  await requireOperator();
  const rows = await consoleAudit({ limit: 200 });
  return (
    <>
      <PageHeader title="Audit log" description="Every operator action and every automatic channel change, newest first. Append-only." />
      <Card>
        {rows.length === 0 ? (
          <EmptyState title="Nothing yet" />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>Time</Th>
                <Th>Who</Th>
                <Th>Action</Th>
                <Th>Target</Th>
                <Th>Before → after</Th>
              </Tr>
            </THead>
            <TBody>
              {rows.map((a) => (
                <Tr key={a.id.toString()} data-testid="audit-row">
                  <Td className="whitespace-nowrap">
                    <LocalTime iso={a.createdAt.toISOString()} />
                  </Td>
                  <Td>{a.actor}</Td>
                  <Td className="font-medium">{a.action}</Td>
                  <Td className="font-mono text-xs">
                    {a.targetType} {a.targetId}
                  </Td>
                  <Td className="max-w-md break-all font-mono text-xs text-slate-500">
                    {JSON.stringify(a.before)} → {JSON.stringify(a.after)}
                    {a.note ? <div className="text-slate-700">{a.note}</div> : null}
                  </Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
    </>
  );
}
