import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { requireOperator } from '@/lib/admin/guard';
import { consoleRecordedUsage, reconcileRange } from '@/lib/admin/console';
import { GatewayError } from '@/lib/errors';
import { getConfig } from '@/lib/config';
import { int, usd } from '@/lib/dashboard/format';
import { ReconcileImport } from '@/components/admin/reconcile-import';
import { Alert } from '@/components/ui/alert';
import { Button, ButtonLink } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Field, Input } from '@/components/ui/input';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Reconciliation')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export default async function AdminReconciliationPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  await requireOperator();
  const sp = await searchParams;
  const t = await serverT();
  let problem: string | null = null;
  let range: { from: string; to: string };
  try {
    range = reconcileRange(one(sp.from), one(sp.to));
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    problem = err.message;
    range = reconcileRange(null, null);
  }
  const rows = await consoleRecordedUsage(range);
  const channels = getConfig().channels.map((c) => c.name);
  const csvHref = `/api/admin/reconciliation?${new URLSearchParams({ ...range, format: 'csv' })}`;
  return (
    <>
      <PageHeader title={t('Reconciliation')} description={t('Tokens and cost we recorded per channel and UTC day, to set against each provider’s invoice.')} />
      <Card>
        <CardHeader
          title={t('Recorded usage')}
          actions={
            <ButtonLink href={csvHref} variant="secondary" size="sm" prefetch={false} data-testid="reconcile-csv">
              {t('Download CSV')}
            </ButtonLink>
          }
        />
        <CardBody>
          <form method="get" className="grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end">
            <Field label={t('From')} htmlFor="reconcile-from">
              <Input id="reconcile-from" name="from" type="date" defaultValue={range.from} />
            </Field>
            <Field label={t('To')} htmlFor="reconcile-to">
              <Input id="reconcile-to" name="to" type="date" defaultValue={range.to} />
            </Field>
            <Button type="submit">{t('Show')}</Button>
          </form>
          {problem && (
            <Alert tone="error" className="mt-3">
              {problem}
            </Alert>
          )}
        </CardBody>
        {rows.length === 0 ? (
          <EmptyState title={t('No requests through any channel in this range')} />
        ) : (
          <Table data-testid="reconcile-recorded">
            <THead>
              <Tr>
                <Th>{t('Day (UTC)')}</Th>
                <Th>{t('Channel')}</Th>
                <Th>{t('Model')}</Th>
                <Th className="text-right">{t('Requests')}</Th>
                <Th className="text-right">{t('Uncached input')}</Th>
                <Th className="text-right">{t('Cache read')}</Th>
                <Th className="text-right">{t('Cache write')}</Th>
                <Th className="text-right">{t('Output')}</Th>
                <Th className="text-right">{t('Cost (USD)')}</Th>
              </Tr>
            </THead>
            <TBody>
              {rows.map((r) => (
                <Tr key={`${r.day}|${r.channel}|${r.model}`} data-testid="reconcile-row">
                  <Td className="whitespace-nowrap font-medium text-slate-900">{r.day}</Td>
                  <Td className="break-all">{r.channel}</Td>
                  <Td className="break-all">{r.model}</Td>
                  <Td className="text-right tabular-nums">{int(r.requests)}</Td>
                  <Td className="text-right tabular-nums">{int(r.uncachedInput)}</Td>
                  <Td className="text-right tabular-nums">{int(r.cacheRead)}</Td>
                  <Td className="text-right tabular-nums">{int(r.cacheWrite)}</Td>
                  <Td className="text-right tabular-nums">{int(r.output)}</Td>
                  <Td className="text-right tabular-nums">{usd(r.costPico)}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader
          title={t('Compare with a provider export')}
          description={t(
            'Paste or choose the usage CSV exported from OpenAI (usage, grouped by model, daily) or Anthropic (messages usage report, daily). Differences are shown per day and model.',
          )}
        />
        <CardBody>
          <ReconcileImport channels={channels} />
        </CardBody>
      </Card>
    </>
  );
}
