import type { Metadata } from 'next';
import { LocalTime } from '@/components/ui/local-time';
import Link from 'next/link';
import { adminFilterQuery } from '@/lib/admin/logs';
import { consoleLogFilters, consoleLogs } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { decodeCursor } from '@/lib/dashboard/filters';
import { GatewayError } from '@/lib/errors';
import { usd } from '@/lib/dashboard/format';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Button, ButtonLink } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Input, Select } from '@/components/ui/input';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export const metadata: Metadata = { title: 'Logs · Operator console' };
export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;

export default async function AdminLogsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  await requireOperator();
  const sp = await searchParams;
  const params = new URLSearchParams(Object.entries(sp).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])));
  let problem: string | null = null;
  let page: Awaited<ReturnType<typeof consoleLogs>> = { data: [], nextCursor: null };
  try {
    const filters = await consoleLogFilters(params);
    const after = params.get('after');
    page = await consoleLogs(filters, { limit: 50, startingAfter: after ? decodeCursor(after, 'after') : undefined });
  } catch (err) {
    if (!(err instanceof GatewayError) || err.status >= 500) throw err;
    problem = err.message;
  }
  const kept = adminFilterQuery(params);
  const next = new URLSearchParams(kept);
  if (page.nextCursor) next.set('after', page.nextCursor);
  const field = (name: string) => params.get(name) ?? '';
  return (
    <>
      <PageHeader
        title="Logs"
        description="Every account's requests, newest first."
        actions={
          <ButtonLink variant="secondary" href={`/api/admin/logs/export?${kept.toString()}`} prefetch={false} data-testid="admin-export">
            Export CSV
          </ButtonLink>
        }
      />
      <form action="/admin/logs" className="mb-4 grid gap-2 sm:grid-cols-4 lg:grid-cols-8">
        <Input name="account" defaultValue={field('account')} placeholder="account email or id" aria-label="Account" className="lg:col-span-2" />
        <Input name="model" defaultValue={field('model')} placeholder="model" aria-label="Model" />
        <Input name="channel" defaultValue={field('channel')} placeholder="channel" aria-label="Channel" />
        <Input name="status" defaultValue={field('status')} placeholder="ok, error, 429, 5xx" aria-label="Status or outcome" />
        <Select name="fallback" defaultValue={field('fallback')} aria-label="Fallback">
          <option value="">any route</option>
          <option value="1">fallback only</option>
          <option value="0">no fallback</option>
        </Select>
        <Input name="from" type="date" defaultValue={field('from')} aria-label="From" />
        <Input name="to" type="date" defaultValue={field('to')} aria-label="To" />
        <Button type="submit" variant="secondary">
          Filter
        </Button>
      </form>
      {problem && (
        <Alert tone="error" className="mb-4">
          {problem}
        </Alert>
      )}
      <Card>
        {page.data.length === 0 ? (
          <EmptyState title="No requests match" />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>Time</Th>
                <Th>Account</Th>
                <Th>Model</Th>
                <Th>Channel</Th>
                <Th>Status</Th>
                <Th className="text-right">Latency</Th>
                <Th className="text-right">Cost</Th>
              </Tr>
            </THead>
            <TBody>
              {page.data.map((e) => (
                <Tr key={e.id} data-testid="admin-log-row">
                  <Td className="whitespace-nowrap">
                    <Link className="text-indigo-700 hover:underline" href={`/admin/logs/${encodeURIComponent(e.id)}`}>
                      <LocalTime iso={e.createdAt.toISOString()} />
                    </Link>
                  </Td>
                  <Td className="max-w-48 truncate">{e.email}</Td>
                  <Td>
                    {e.modelServed ?? e.modelRequested ?? '–'}
                    {e.modelServed && e.modelRequested && e.modelServed !== e.modelRequested && (
                      <div className="text-xs text-slate-500">asked {e.modelRequested}</div>
                    )}
                  </Td>
                  <Td>{e.channel ?? '–'}</Td>
                  <Td>
                    <Badge tone={e.outcome === 'ok' ? 'green' : e.status >= 500 ? 'red' : 'amber'}>
                      {e.status} {e.outcome}
                    </Badge>
                  </Td>
                  <Td className="text-right tabular-nums">{e.latencyMs} ms</Td>
                  <Td className="text-right tabular-nums">{usd(e.costUsd)}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
      {page.nextCursor && (
        <div className="mt-4 flex justify-end">
          <ButtonLink variant="secondary" href={`/admin/logs?${next.toString()}`}>
            Older
          </ButtonLink>
        </div>
      )}
    </>
  );
}
