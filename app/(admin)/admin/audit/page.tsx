import { LocalTime } from '@/components/ui/local-time';
import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { consoleAudit } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Audit log')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminAuditPage() {
  await requireOperator();
  const [rows, t] = await Promise.all([consoleAudit({ limit: 200 }), serverT()]);
  return (
    <>
      <PageHeader title={t('Audit log')} description={t('Every operator action and every automatic channel change, newest first. Append-only.')} />
      <Card>
        {rows.length === 0 ? (
          <EmptyState title={t('Nothing yet')} />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>{t('Time')}</Th>
                <Th>{t('Who')}</Th>
                <Th>{t('Action')}</Th>
                <Th>{t('Target')}</Th>
                <Th>{t('Before → after')}</Th>
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
