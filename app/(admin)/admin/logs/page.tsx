import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { localeOf } from '@/lib/i18n/translate';
import { apiErrorText } from '@/lib/i18n/codes';
import { LocalTime } from '@/components/ui/local-time';
import Link from 'next/link';
import { adminFilterQuery } from '@/lib/admin/logs';
import { consoleLogFilters, consoleLogs } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { decodeCursor } from '@/lib/dashboard/filters';
import { apiErrorBody, GatewayError } from '@/lib/errors';
import { usd } from '@/lib/dashboard/format';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Button, ButtonLink } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Input, Select } from '@/components/ui/input';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Logs')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;

export default async function AdminLogsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  await requireOperator();
  const t = await serverT();
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
    problem = apiErrorText(localeOf(t), apiErrorBody(err), err.status);
  }
  const kept = adminFilterQuery(params);
  const next = new URLSearchParams(kept);
  if (page.nextCursor) next.set('after', page.nextCursor);
  const field = (name: string) => params.get(name) ?? '';
  return (
    <>
      <PageHeader
        title={t('Logs')}
        description={t("Every account's requests, newest first.")}
        actions={
          <ButtonLink variant="secondary" href={`/api/admin/logs/export?${kept.toString()}`} prefetch={false} data-testid="admin-export">
            {t('Export CSV')}
          </ButtonLink>
        }
      />
      <form action="/admin/logs" className="mb-4 grid gap-2 sm:grid-cols-4 lg:grid-cols-8">
        <Input name="account" defaultValue={field('account')} placeholder={t('account email or id')} aria-label={t('Account')} className="lg:col-span-2" />
        <Input name="model" defaultValue={field('model')} placeholder={t('model')} aria-label={t('Model')} />
        <Input name="channel" defaultValue={field('channel')} placeholder={t('channel')} aria-label={t('Channel')} />
        <Input name="status" defaultValue={field('status')} placeholder="ok, error, 429, 5xx" aria-label={t('Status or outcome')} />
        <Select name="fallback" defaultValue={field('fallback')} aria-label={t('Fallback')}>
          <option value="">{t('any route')}</option>
          <option value="1">{t('fallback only')}</option>
          <option value="0">{t('no fallback')}</option>
        </Select>
        <Input name="from" type="date" defaultValue={field('from')} aria-label={t('From')} />
        <Input name="to" type="date" defaultValue={field('to')} aria-label={t('To')} />
        <Button type="submit" variant="secondary">
          {t('Filter')}
        </Button>
      </form>
      {problem && (
        <Alert tone="error" className="mb-4">
          {problem}
        </Alert>
      )}
      <Card>
        {page.data.length === 0 ? (
          <EmptyState title={t('No requests match')} />
        ) : (
          <Table>
            <THead>
              <Tr>
                <Th>{t('Time')}</Th>
                <Th>{t('Account')}</Th>
                <Th>{t('Model')}</Th>
                <Th>{t('Channel')}</Th>
                <Th>{t('Status')}</Th>
                <Th className="text-right">{t('Latency')}</Th>
                <Th className="text-right">{t('Cost')}</Th>
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
                      <div className="text-xs text-slate-500">{t('asked {model}', { model: e.modelRequested })}</div>
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
            {t('Older')}
          </ButtonLink>
        </div>
      )}
    </>
  );
}
