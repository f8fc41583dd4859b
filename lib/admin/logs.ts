import { getDb, isUuid } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { codedError } from '@/lib/errors';
import { findUserByEmail } from '@/lib/accounts/queries';
import { encodeCursor, isPlausibleId, parseLogFilters, type LogCursor, type LogFilters, type SearchParamsLike } from '@/lib/dashboard/filters';
import { listSelect, statusWhere, toLogEntry, type LogEntry } from '@/lib/dashboard/queries';
import { LogTotals, logCsvHeader, logCsvValues, logJsonLine, logTotalsCsvValues, logTotalsJsonLine, type LogExportFormat } from '@/lib/dashboard/log-csv';
import { csvRow } from '@/lib/dashboard/csv';
import { AUTO_MODEL } from '@/lib/gateway/router';

// Every account's request log for operators: the dashboard's filters (model, status/outcome, time
// range) plus account, channel and fallback; keyset pages, newest first; CSV export.

export interface AdminLogFilters extends LogFilters {
  userId?: string;
  /** An account filter that matched nobody: the answer is empty. */
  noAccount?: boolean;
  channel?: string;
  /** true: served by another model than the one asked for (service-auto's choices aside). */
  fallback?: boolean;
}

export async function parseAdminLogFilters(params: SearchParamsLike): Promise<AdminLogFilters> {
  const filters: AdminLogFilters = parseLogFilters(params);
  const account = params.get('account')?.trim();
  if (account) {
    if (isUuid(account)) filters.userId = account.toLowerCase();
    else if (account.includes('@') && account.length <= 254) {
      const user = await findUserByEmail(account);
      if (user) filters.userId = user.id;
      else filters.noAccount = true;
    } else throw codedError('invalid_request', 'admin.log_account', undefined, { param: 'account' });
  }
  const channel = params.get('channel')?.trim();
  if (channel) {
    if (!isPlausibleId(channel)) throw codedError('invalid_request', 'admin.log_channel', undefined, { param: 'channel' });
    filters.channel = channel;
  }
  const fallback = params.get('fallback')?.trim();
  if (fallback) {
    if (!['1', '0', 'true', 'false'].includes(fallback)) throw codedError('invalid_request', 'admin.log_fallback', undefined, { param: 'fallback' });
    filters.fallback = fallback === '1' || fallback === 'true';
  }
  return filters;
}

/** The filter params again, for links that keep them. */
export function adminFilterQuery(params: SearchParamsLike): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of ['account', 'model', 'channel', 'status', 'fallback', 'from', 'to']) {
    const value = params.get(name)?.trim();
    if (value) out.set(name, value);
  }
  return out;
}

function adminLogWhere(db: Awaited<ReturnType<typeof getDb>>, f: AdminLogFilters): Prisma.RequestLogWhereInput {
  const and: Prisma.RequestLogWhereInput[] = [];
  if (f.noAccount) and.push({ id: { in: [] } });
  if (f.userId) and.push({ userId: f.userId });
  if (f.keyId) and.push({ apiKeyId: f.keyId });
  if (f.model) and.push({ OR: [{ modelRequested: f.model }, { modelServed: f.model }] });
  if (f.channel) and.push({ channel: f.channel });
  if (f.status) and.push(statusWhere(f.status));
  if (f.from) and.push({ createdAt: { gte: f.from } });
  if (f.to) and.push({ createdAt: { lt: f.to } });
  if (f.fallback !== undefined) {
    const moved: Prisma.RequestLogWhereInput = {
      modelServed: { not: null },
      modelRequested: { not: AUTO_MODEL },
      NOT: { modelServed: { equals: db.requestLog.fields.modelRequested } },
    };
    and.push(f.fallback ? moved : { NOT: moved });
  }
  return { AND: and };
}

export interface AdminLogEntry extends LogEntry {
  userId: string;
  email: string;
}

export async function listAdminLogs(
  filters: AdminLogFilters,
  opts: { limit: number; startingAfter?: LogCursor },
): Promise<{ data: AdminLogEntry[]; nextCursor: string | null }> {
  const db = await getDb();
  const where = adminLogWhere(db, filters);
  const c = opts.startingAfter;
  const rows = await db.requestLog.findMany({
    where: c ? { AND: [where, { OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }] }] } : where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: opts.limit + 1,
    select: { ...listSelect, userId: true },
  });
  const page = rows.slice(0, opts.limit);
  const emails = await emailsOf(page.map((r) => r.userId));
  const data = page.map(({ userId, ...row }) => ({ ...toLogEntry(row), userId, email: emails.get(userId) ?? '' }));
  const last = data.at(-1);
  return { data, nextCursor: rows.length > opts.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null };
}

async function emailsOf(ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const users = await (await getDb()).user.findMany({ where: { id: { in: unique } }, select: { id: true, email: true } });
  return new Map(users.map((u) => [u.id, u.email]));
}

export async function getAdminLog(id: string) {
  if (!isPlausibleId(id)) throw codedError('not_found', 'admin.no_request');
  const db = await getDb();
  // Request ids are unique; the table's key also holds the day it is partitioned by (createdAt).
  const row = await db.requestLog.findFirst({ where: { id }, select: { ...listSelect, userId: true, attempts: true } });
  if (!row) throw codedError('not_found', 'admin.no_request');
  const { userId, attempts, ...rest } = row;
  const emails = await emailsOf([userId]);
  return { ...toLogEntry(rest), userId, email: emails.get(userId) ?? '', attempts };
}

export const ADMIN_EXPORT_MAX_ROWS = 100_000;

/** CSV (account columns first, then the dashboard export's columns) or JSONL, newest first, in batches; the totals last. */
export async function* adminLogCsvLines(filters: AdminLogFilters, maxRows = ADMIN_EXPORT_MAX_ROWS, format: LogExportFormat = 'csv'): AsyncGenerator<string> {
  if (format === 'csv') yield csvRow(['account_id', 'account_email', ...logCsvHeader]);
  const totals = new LogTotals();
  let cursor: LogCursor | undefined;
  let written = 0;
  while (written < maxRows) {
    const page = await listAdminLogs(filters, { limit: Math.min(1000, maxRows - written), startingAfter: cursor });
    if (page.data.length === 0) break;
    for (const e of page.data) totals.add(e);
    yield page.data
      .map((e) =>
        format === 'csv'
          ? csvRow([e.userId, e.email, ...logCsvValues(e, undefined)])
          : logJsonLine(e, undefined, { account_id: e.userId, account_email: e.email }),
      )
      .join('');
    written += page.data.length;
    if (!page.nextCursor) break;
    const last = page.data[page.data.length - 1];
    cursor = { createdAt: last.createdAt, id: last.id };
  }
  yield format === 'csv' ? csvRow(['', '', ...logTotalsCsvValues(totals)]) : logTotalsJsonLine(totals);
}
