import type { Metadata } from 'next';
import { requireOperator } from '@/lib/admin/guard';
import { currentLocale } from '@/lib/i18n/server';
import { dateTime } from '@/lib/dashboard/format';
import { logExportStatus } from '@/lib/log-export/exporter';
import { fillWords, logExportWords, type LogExportWords } from '@/lib/log-export/messages';
import { ExportForm, ReplayForm } from '@/components/admin/log-export-forms';
import { Alert } from '@/components/ui/alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export const metadata: Metadata = { title: 'Log export · Operator console' };
export const dynamic = 'force-dynamic';

const statusWord = (w: LogExportWords, status: string) => (status in w ? w[status as 'pending' | 'running' | 'done' | 'failed'] : status);

export default async function AdminLogExportPage() {
  await requireOperator();
  const w = logExportWords(await currentLocale());
  const s = await logExportStatus();
  const when = (iso: string | null) => (iso ? dateTime(new Date(iso)) : w.none);
  return (
    <>
      <PageHeader title={w.title} description={w.description} />
      <Card>
        <CardHeader title={w.sink} />
        <CardBody>
          {!s.configured ? (
            <Alert tone="info" data-testid="log-export-unconfigured">
              {w.notConfigured}
            </Alert>
          ) : (
            <dl className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-2" data-testid="log-export-status">
              <div className="min-w-0">
                <dt className="text-slate-500">{w.url}</dt>
                <dd className="break-all font-mono text-xs">{s.url}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{w.batch}</dt>
                <dd>{fillWords(w.batchValue, { rows: s.maxRows ?? 0, seconds: s.maxSeconds ?? 0 })}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{w.cursor}</dt>
                <dd data-testid="log-export-cursor">{when(s.cursor?.createdAt ?? null)}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{w.delivered}</dt>
                <dd data-testid="log-export-delivered">{fillWords(w.deliveredValue, { rows: s.rows, batches: s.batches })}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{w.lastSuccess}</dt>
                <dd>{when(s.lastSuccessAt)}</dd>
              </div>
              <div className="min-w-0">
                <dt className="text-slate-500">{w.lastError}</dt>
                <dd className="break-words">{s.lastError ? `${s.lastError} (${when(s.lastErrorAt)})` : w.none}</dd>
              </div>
            </dl>
          )}
        </CardBody>
      </Card>
      {s.configured && (
        <Card className="mt-6">
          <CardHeader title={w.replay} description={w.replayHelp} />
          <CardBody>
            <ReplayForm w={w} />
          </CardBody>
          {s.replays.length === 0 ? (
            <EmptyState title={w.noReplays} />
          ) : (
            <div className="overflow-x-auto">
              <Table>
                <THead>
                  <Tr>
                    <Th>{w.range}</Th>
                    <Th>{w.status}</Th>
                    <Th className="text-right">{w.rows}</Th>
                    <Th>{w.by}</Th>
                  </Tr>
                </THead>
                <TBody>
                  {s.replays.map((r) => (
                    <Tr key={r.id} data-testid="replay-row">
                      <Td>
                        {dateTime(new Date(r.from))} – {dateTime(new Date(r.to))}
                      </Td>
                      <Td data-testid="replay-status">{statusWord(w, r.status)}</Td>
                      <Td className="text-right tabular-nums">{r.rows}</Td>
                      <Td className="break-all">{r.createdBy}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            </div>
          )}
        </Card>
      )}
      <Card className="mt-6">
        <CardHeader title={w.download} description={w.downloadHelp} />
        <CardBody>
          <ExportForm w={w} />
        </CardBody>
      </Card>
    </>
  );
}
