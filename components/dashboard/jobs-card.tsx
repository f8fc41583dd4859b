// The account's recent jobs (video generations, batches) above its request log: each with its
// status and progress, and a preview of a finished video or the output of a finished batch.
import { serverT } from '@/lib/i18n/server';
import { recentJobs, type JobRow } from '@/lib/gateway/jobs/store';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { Card } from '@/components/ui/card';
import { LocalTime } from '@/components/ui/local-time';
import { Table, TBody, Td, Th, THead } from '@/components/ui/table';

const TONE: Record<JobRow['status'], BadgeTone> = { queued: 'neutral', running: 'blue', succeeded: 'green', failed: 'red', cancelled: 'amber' };

export async function JobsCard({ userId }: { userId: string }) {
  const jobs = await recentJobs(userId, 10);
  if (jobs.length === 0) return null;
  const t = await serverT();
  const statusLabel: Record<JobRow['status'], string> = {
    queued: t('Queued'),
    running: t('In progress'),
    succeeded: t('Completed'),
    failed: t('Failed'),
    cancelled: t('Cancelled'),
  };
  return (
    <Card className="mb-4" data-testid="jobs-card">
      <h2 className="px-4 pt-4 text-sm font-semibold text-slate-900 sm:px-5">{t('Jobs')}</h2>
      <Table>
        <THead>
          <tr>
            <Th>{t('Time')}</Th>
            <Th>{t('Job')}</Th>
            <Th>{t('Status')}</Th>
            <Th className="text-right">{t('Preview')}</Th>
          </tr>
        </THead>
        <TBody>
          {jobs.map((j) => {
            const input = j.input as { model?: string; endpoint?: string; total?: number };
            const done = j.status === 'succeeded';
            return (
              <tr key={j.id} data-testid="job-row">
                <Td className="whitespace-nowrap tabular-nums">
                  <LocalTime iso={j.createdAt.toISOString()} />
                </Td>
                <Td>
                  <div className="text-slate-900">
                    {j.kind === 'video' ? t('Video · {model}', { model: input.model ?? '' }) : t('Batch · {count} requests', { count: input.total ?? 0 })}
                  </div>
                  <div className="font-mono text-xs text-slate-500">{j.id}</div>
                </Td>
                <Td className="whitespace-nowrap">
                  <Badge tone={TONE[j.status]}>{statusLabel[j.status]}</Badge>
                  {j.status === 'running' && <span className="ml-2 text-xs tabular-nums text-slate-600">{j.progress}%</span>}
                  {j.error && j.status !== 'succeeded' && <div className="mt-1 font-mono text-xs text-slate-500">{j.error.code}</div>}
                </Td>
                <Td className="whitespace-nowrap text-right">
                  {done && (
                    <a href={`/api/jobs/${encodeURIComponent(j.id)}/content`} target="_blank" rel="noopener" className="text-indigo-600 hover:text-indigo-500">
                      {j.kind === 'video' ? t('Watch video') : t('Download output')}
                    </a>
                  )}
                </Td>
              </tr>
            );
          })}
        </TBody>
      </Table>
    </Card>
  );
}
