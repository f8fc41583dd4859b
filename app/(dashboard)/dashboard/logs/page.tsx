import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import Link from 'next/link';
import { getConfig } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { decodeCursor, filterQuery, parseLogFilters, type LogCursor, type LogFilters as Filters } from '@/lib/dashboard/filters';
import { listKeyNames, listLogs, type LogPage } from '@/lib/dashboard/queries';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { cny, int, latency, usd } from '@/lib/dashboard/format';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { buttonClass } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { ListOrTable } from '@/components/ui/list-or-table';
import { Table, TBody, Td, Th, THead } from '@/components/ui/table';
import { LogFilters } from '@/components/dashboard/log-filters';
import { ModelCell, StatusBadge, TokensCell } from '@/components/dashboard/log-cells';
import { RowLink } from '@/components/dashboard/row-link';
import { LocalTime } from '@/components/ui/local-time';
import { PLAYGROUND_KEY_ID } from '@/lib/auth/playground';
import { JobsCard } from '@/components/dashboard/jobs-card';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Logs')} · Model Gateway` };
}

const PAGE_SIZE = 50;

type SearchParams = Record<string, string | string[] | undefined>;

function toParams(sp: SearchParams): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(sp)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first) params.set(name, first);
  }
  return params;
}

export default async function LogsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const user = await requirePageAccount('/dashboard/logs');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const params = toParams(await searchParams);

  let filters: Filters = {};
  let problem: string | null = null;
  let startingAfter: LogCursor | undefined;
  let endingBefore: LogCursor | undefined;
  try {
    filters = parseLogFilters(params);
    const after = params.get('starting_after');
    const before = params.get('ending_before');
    startingAfter = after ? decodeCursor(after, 'starting_after') : undefined;
    endingBefore = before ? decodeCursor(before, 'ending_before') : undefined;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    problem = err.message;
  }

  const empty: LogPage = { data: [], nextCursor: null, prevCursor: null };
  const [page, keys] = await Promise.all([
    problem ? empty : listLogs(user.id, filters, { limit: PAGE_SIZE, startingAfter, endingBefore }),
    listKeyNames(user.id),
  ]);
  const { t } = await currentMessages();
  const tr = await serverT();
  const keyNames = new Map(keys.map((k) => [k.id, k.name]));
  keyNames.set(PLAYGROUND_KEY_ID, tr('Playground')); // the dashboard playground's requests (lib/auth/playground.ts)

  const query = filterQuery(params);
  const withQuery = (extra: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    const text = q.toString();
    return text ? `/dashboard/logs?${text}` : '/dashboard/logs';
  };
  const models = ['service-auto', ...getConfig().models.keys()];
  const paged = Boolean(startingAfter || endingBefore);

  return (
    <>
      <PageHeader title={t.pages.logs.title} description={t.pages.logs.description} />

      <Card className="mb-4 px-4 py-4 sm:px-5">
        <LogFilters
          values={{
            key: params.get('key') ?? '',
            model: params.get('model') ?? '',
            status: params.get('status') ?? '',
            from: params.get('from') ?? '',
            to: params.get('to') ?? '',
          }}
          keys={keys}
          models={models}
          exportHref={`/api/logs/export${query.size ? `?${query}` : ''}`}
        />
      </Card>

      {!paged && <JobsCard userId={user.id} />}

      {problem && (
        <Alert tone="error" className="mb-4" title={tr('These filters are not valid.')}>
          {problem}
        </Alert>
      )}

      <Card>
        {page.data.length === 0 && endingBefore && page.prevCursor ? (
          // A filtered page stops its search after a bounded number of requests (LOG_SCAN_BUDGET);
          // paging back towards newer requests, the search goes on that way.
          <EmptyState title={tr('None of the requests searched so far match')}>{tr('Newer requests may: search on with ← Newer.')}</EmptyState>
        ) : page.data.length === 0 && page.nextCursor ? (
          <EmptyState title={tr('None of the requests searched so far match')}>{tr('Older requests may: search on with Older →.')}</EmptyState>
        ) : page.data.length === 0 ? (
          <EmptyState title={query.size || paged ? tr('No requests match these filters') : tr('No requests yet')}>
            {query.size || paged ? (
              <Link href="/dashboard/logs" className="text-indigo-600 hover:text-indigo-500">
                {tr('Show all requests')}
              </Link>
            ) : (
              tr('Requests made with your API keys appear here within a second or two.')
            )}
          </EmptyState>
        ) : (
          <ListOrTable
            label={tr('Requests')}
            items={
              <>
                {page.data.map((e) => {
                  const href = `/dashboard/logs/${encodeURIComponent(e.id)}`;
                  return (
                    <li key={e.id} data-testid="log-card">
                      <Link href={href} className="block px-4 py-3 hover:bg-slate-50">
                        <div className="flex items-start justify-between gap-3">
                          <div className="min-w-0">
                            <ModelCell entry={e} />
                          </div>
                          <StatusBadge status={e.status} outcome={e.outcome} />
                        </div>
                        <div className="mt-1 flex items-baseline justify-between gap-3 text-sm">
                          <LocalTime iso={e.createdAt.toISOString()} className="tabular-nums text-slate-600" />
                          <span className="font-medium tabular-nums text-slate-900">{usd(e.costUsd)}</span>
                        </div>
                        <div className="mt-0.5 flex items-baseline justify-between gap-3 text-xs text-slate-600">
                          <span className="tabular-nums">
                            {tr('{in} in / {out} out', { in: int(e.promptTokens), out: int(e.completionTokens) })} · {latency(e.latencyMs)}
                          </span>
                          <span className="tabular-nums">{cny(e.costCny)}</span>
                        </div>
                        {e.errorCode && <div className="mt-1 truncate font-mono text-xs text-slate-600">{e.errorCode}</div>}
                      </Link>
                    </li>
                  );
                })}
              </>
            }
            table={
              <Table>
                <THead>
                  <tr>
                    <Th>{tr('Time')}</Th>
                    <Th>{tr('Model')}</Th>
                    <Th className="hidden xl:table-cell">{tr('Key')}</Th>
                    <Th className="hidden lg:table-cell">{tr('Provider')}</Th>
                    <Th className="text-right">{tr('Tokens in / out')}</Th>
                    <Th className="text-right">{tr('Cost')}</Th>
                    <Th className="hidden text-right md:table-cell">{tr('Latency')}</Th>
                    <Th>{tr('Status')}</Th>
                  </tr>
                </THead>
                <TBody>
                  {page.data.map((e) => {
                    const href = `/dashboard/logs/${encodeURIComponent(e.id)}`;
                    return (
                      <RowLink key={e.id} href={href} testId="log-row">
                        <Td className="whitespace-nowrap">
                          <Link href={href} className="tabular-nums text-slate-900 hover:text-indigo-600">
                            <LocalTime iso={e.createdAt.toISOString()} />
                          </Link>
                          <div className="mt-0.5 flex items-center gap-1 text-xs text-slate-500">
                            {e.endpoint.replace(/^\/v1\//, '')}
                            {e.stream && <Badge tone="blue">{tr('stream')}</Badge>}
                          </div>
                        </Td>
                        <Td>
                          <ModelCell entry={e} />
                        </Td>
                        <Td className="hidden max-w-40 truncate xl:table-cell" data-testid="log-key">
                          {e.apiKeyId ? (keyNames.get(e.apiKeyId) ?? tr('deleted key')) : '—'}
                        </Td>
                        <Td className="hidden whitespace-nowrap lg:table-cell">{e.channel ?? <span className="text-slate-500">—</span>}</Td>
                        <Td className="text-right">
                          <TokensCell entry={e} />
                        </Td>
                        <Td className="whitespace-nowrap text-right tabular-nums">
                          <div className="text-slate-900">{usd(e.costUsd)}</div>
                          <div className="text-xs text-slate-500">
                            {cny(e.costCny)}
                            {e.billedTo === 'plan' && <span data-testid="log-billed-plan"> · {tr('Plan')}</span>}
                          </div>
                        </Td>
                        <Td className="hidden whitespace-nowrap text-right tabular-nums md:table-cell">
                          {latency(e.latencyMs)}
                          {e.firstTokenMs !== null && <div className="text-xs text-slate-500">TTFT {latency(e.firstTokenMs)}</div>}
                        </Td>
                        <Td className="whitespace-nowrap">
                          <StatusBadge status={e.status} outcome={e.outcome} />
                          {e.errorCode && <div className="mt-1 font-mono text-xs text-slate-500">{e.errorCode}</div>}
                        </Td>
                      </RowLink>
                    );
                  })}
                </TBody>
              </Table>
            }
          />
        )}
        {(page.prevCursor || page.nextCursor || paged) && (
          <nav aria-label={tr('Pagination')} className="flex items-center justify-between gap-2 border-t border-slate-100 px-4 py-3 sm:px-5">
            <div className="flex gap-2">
              {paged && (
                <Link href={withQuery({})} className={buttonClass({ variant: 'ghost', size: 'sm' })}>
                  {tr('Newest')}
                </Link>
              )}
            </div>
            <div className="flex gap-2">
              {page.prevCursor ? (
                <Link
                  href={withQuery({ ending_before: page.prevCursor })}
                  className={buttonClass({ variant: 'secondary', size: 'sm' })}
                  data-testid="page-newer"
                >
                  {tr('← Newer')}
                </Link>
              ) : (
                <span className={buttonClass({ variant: 'secondary', size: 'sm', className: 'pointer-events-none opacity-50' })} aria-disabled="true">
                  {tr('← Newer')}
                </span>
              )}
              {page.nextCursor ? (
                <Link
                  href={withQuery({ starting_after: page.nextCursor })}
                  className={buttonClass({ variant: 'secondary', size: 'sm' })}
                  data-testid="page-older"
                >
                  {tr('Older →')}
                </Link>
              ) : (
                <span className={buttonClass({ variant: 'secondary', size: 'sm', className: 'pointer-events-none opacity-50' })} aria-disabled="true">
                  {tr('Older →')}
                </span>
              )}
            </div>
          </nav>
        )}
      </Card>
    </>
  );
}
