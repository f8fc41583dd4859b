import { getDb } from '@/lib/db';
import { channelLabel, publicAttempts } from '@/lib/channels/labels';
import { NOT_FAILED_OUTCOMES, failedSql } from '@/lib/billing/failed';
import { Prisma } from '@/lib/generated/prisma/client';
import { usdToPico } from '@/lib/billing/money';
import { parseStoredBreakdown } from '@/lib/billing/breakdown';
import { GatewayError } from '@/lib/errors';
import { decodeCursor, encodeCursor, isPlausibleId, isQueryableDate, type LogCursor, type LogFilters, type StatusFilter } from './filters';
import { LogTotals, logCsvHeader, logCsvValues, logJsonLine, logTotalsCsvValues, logTotalsJsonLine, type LogExportFormat, type LogGroupNames } from './log-csv';
import { csvRow } from './csv';
import type { LogEntry } from './log-entry';

// Read-only queries behind the dashboard. Every one of them is scoped by the caller's userId.
// Money comes back as bigint pico-USD (or pico-CNY); aggregates are summed by PostgreSQL in numeric,
// cast to text and parsed exactly, so no float ever touches an amount.

type DecimalLike = { toFixed(digits: number): string };
const pico = (d: DecimalLike): bigint => usdToPico(d.toFixed(12));
const picoText = (text: string): bigint => usdToPico(text);

export type { LogEntry } from './log-entry';

export interface LogDetail extends LogEntry {
  attempts: Prisma.JsonValue | null;
}

export interface LogPage {
  data: LogEntry[];
  /** Pass as `starting_after` for the next (older) page; null on the last page. */
  nextCursor: string | null;
  /** Pass as `ending_before` for the previous (newer) page; null on the first page. */
  prevCursor: string | null;
}

export interface LogPageOptions {
  limit: number;
  /** Rows strictly older than this cursor. */
  startingAfter?: LogCursor;
  /** Rows strictly newer than this cursor (the page just before it). */
  endingBefore?: LogCursor;
}

/** What a short list of requests shows (the operator console's recent requests of an account). */
export const logSummarySelect = {
  id: true,
  createdAt: true,
  endpoint: true,
  modelRequested: true,
  modelServed: true,
  channel: true,
  status: true,
  outcome: true,
  costUsd: true,
  latencyMs: true,
} satisfies Prisma.RequestLogSelect;

export const listSelect = {
  ...logSummarySelect,
  apiKeyId: true,
  errorCode: true,
  stream: true,
  promptTokens: true,
  completionTokens: true,
  cacheReadTokens: true,
  cacheWriteTokens: true,
  tokensEstimated: true,
  costCny: true,
  cnyRate: true,
  firstTokenMs: true,
  routeReason: true,
  region: true,
  billedTo: true,
  projectId: true,
  memberId: true,
  // Small (a few hundred bytes): the CSV export's breakdown columns and the detail views read it.
  priceBreakdown: true,
} satisfies Prisma.RequestLogSelect;

type ListRow = Prisma.RequestLogGetPayload<{ select: typeof listSelect }>;

export function toLogEntry(row: ListRow): LogEntry {
  return {
    ...row,
    costUsd: pico(row.costUsd),
    costCny: pico(row.costCny),
    cnyRate: row.cnyRate.toFixed(8).replace(/\.?0+$/, ''),
    priceBreakdown: parseStoredBreakdown(row.priceBreakdown),
  };
}

export function statusWhere(status: StatusFilter): Prisma.RequestLogWhereInput {
  switch (status.kind) {
    case 'outcome':
      return { outcome: status.outcome };
    case 'failed':
      return { outcome: { notIn: [...NOT_FAILED_OUTCOMES] } };
    case 'http':
      return { status: status.status };
    case 'http_class':
      return { status: { gte: status.hundreds * 100, lt: status.hundreds * 100 + 100 } };
  }
}

/**
 * The parsers in ./filters refuse what the database cannot take (NUL bytes, dates past 9999); this
 * is the same check where the values reach the query, so a caller that skipped them gets a 400, not
 * a database error answered as 500 (or a CSV export cut after its first line).
 */
function assertQueryable(filters: LogFilters, cursors: (LogCursor | undefined)[] = []): void {
  for (const [name, date] of [
    ['from', filters.from],
    ['to', filters.to],
  ] as const) {
    if (date && !isQueryableDate(date)) throw new GatewayError('invalid_request', `${name} is out of range.`, { param: name });
  }
  if (filters.model !== undefined && !isPlausibleId(filters.model)) throw new GatewayError('invalid_request', 'model is not a model name.', { param: 'model' });
  for (const c of cursors) {
    if (c && (!isQueryableDate(c.createdAt) || !isPlausibleId(c.id)))
      throw new GatewayError('invalid_request', 'cursor is not a valid cursor.', { param: 'cursor' });
  }
}

export function logWhere(userId: string, filters: LogFilters): Prisma.RequestLogWhereInput {
  assertQueryable(filters);
  const and: Prisma.RequestLogWhereInput[] = [{ userId }];
  if (filters.keyId) and.push({ apiKeyId: filters.keyId });
  if (filters.model) and.push({ OR: [{ modelRequested: filters.model }, { modelServed: filters.model }] });
  if (filters.status) and.push(statusWhere(filters.status));
  if (filters.from) and.push({ createdAt: { gte: filters.from } });
  if (filters.to) and.push({ createdAt: { lt: filters.to } });
  return { AND: and };
}

// Each cursor bound carries its plain range on createdAt too, which the (userId, createdAt) index and
// the day partitions can use: a page deep in the log starts reading at its cursor, not at the newest row.
const olderThan = (c: LogCursor): Prisma.RequestLogWhereInput => ({
  AND: [{ createdAt: { lte: c.createdAt } }, { OR: [{ createdAt: { lt: c.createdAt } }, { id: { lt: c.id } }] }],
});
const newerThan = (c: LogCursor): Prisma.RequestLogWhereInput => ({
  AND: [{ createdAt: { gte: c.createdAt } }, { OR: [{ createdAt: { gt: c.createdAt } }, { id: { gt: c.id } }] }],
});
/** The cursor's row and everything newer (or older): where a page's search stopped, kept. */
const notOlderThan = (c: LogCursor): Prisma.RequestLogWhereInput => ({
  AND: [{ createdAt: { gte: c.createdAt } }, { OR: [{ createdAt: { gt: c.createdAt } }, { id: { gte: c.id } }] }],
});
const notNewerThan = (c: LogCursor): Prisma.RequestLogWhereInput => ({
  AND: [{ createdAt: { lte: c.createdAt } }, { OR: [{ createdAt: { lt: c.createdAt } }, { id: { lte: c.id } }] }],
});
const cursorOf = (e: { createdAt: Date; id: string }) => encodeCursor({ createdAt: e.createdAt, id: e.id });

/**
 * Most rows one filtered log page examines. The account, key and time range are in the log's
 * indexes; model and status are not, so a page filtered by them reads rows until it has found a
 * page, which for a filter matching few of an account's requests is most of its log. A page stops
 * after this many: it may then hold fewer rows than asked (even none), and its cursor continues
 * where the search stopped.
 */
export const LOG_SCAN_BUDGET = 2000;

/** The part of the filters the indexes answer: account, key, time range. */
function indexedWhere(userId: string, filters: LogFilters, cursor: Prisma.RequestLogWhereInput | null): Prisma.RequestLogWhereInput {
  const and: Prisma.RequestLogWhereInput[] = [{ userId }];
  if (filters.keyId) and.push({ apiKeyId: filters.keyId });
  if (filters.from) and.push({ createdAt: { gte: filters.from } });
  if (filters.to) and.push({ createdAt: { lt: filters.to } });
  if (cursor) and.push(cursor);
  return { AND: and };
}

/**
 * Where a filtered page's search stops: the LOG_SCAN_BUDGET-th row in the page's direction that the
 * indexes select (null when fewer remain, or when every filter is indexed and the page reads only
 * what it returns).
 */
async function scanEdge(userId: string, filters: LogFilters, cursor: Prisma.RequestLogWhereInput | null, dir: 'asc' | 'desc'): Promise<LogCursor | null> {
  if (!filters.model && !filters.status) return null;
  const db = await getDb();
  const edge = await db.requestLog.findMany({
    where: indexedWhere(userId, filters, cursor),
    orderBy: [{ createdAt: dir }, { id: dir }],
    skip: LOG_SCAN_BUDGET - 1,
    take: 1,
    select: { createdAt: true, id: true },
  });
  return edge[0] ?? null;
}

/** One page of the caller's request log, newest first (ties broken by id, so pages never overlap). */
/** A log row as its account sees it: the channel's public label, never its internal name (lib/channels/labels.ts). */
function toPublicLogEntry(row: ListRow): LogEntry {
  const e = toLogEntry(row);
  return { ...e, channel: channelLabel(e.channel) };
}

export async function listLogs(userId: string, filters: LogFilters, opts: LogPageOptions): Promise<LogPage> {
  assertQueryable(filters, [opts.startingAfter, opts.endingBefore]);
  const db = await getDb();
  const where = logWhere(userId, filters);
  if (opts.endingBefore) {
    const edge = await scanEdge(userId, filters, newerThan(opts.endingBefore), 'asc');
    const rows = await db.requestLog.findMany({
      where: { AND: [where, newerThan(opts.endingBefore), ...(edge ? [notNewerThan(edge)] : [])] },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: opts.limit + 1,
      select: listSelect,
    });
    const hasNewer = rows.length > opts.limit;
    const data = rows.slice(0, opts.limit).reverse().map(toPublicLogEntry);
    return {
      data,
      prevCursor: hasNewer && data.length ? cursorOf(data[0]) : edge ? cursorOf(edge) : null,
      nextCursor: data.length ? cursorOf(data[data.length - 1]) : edge ? cursorOf(opts.endingBefore) : null,
    };
  }
  const after = opts.startingAfter ? olderThan(opts.startingAfter) : null;
  const edge = await scanEdge(userId, filters, after, 'desc');
  const rows = await db.requestLog.findMany({
    where: { AND: [where, ...(after ? [after] : []), ...(edge ? [notOlderThan(edge)] : [])] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: opts.limit + 1,
    select: listSelect,
  });
  const hasOlder = rows.length > opts.limit;
  const data = rows.slice(0, opts.limit).map(toPublicLogEntry);
  return {
    data,
    nextCursor: hasOlder && data.length ? cursorOf(data[data.length - 1]) : edge ? cursorOf(edge) : null,
    prevCursor: opts.startingAfter ? (data.length ? cursorOf(data[0]) : edge ? cursorOf(opts.startingAfter) : null) : null,
  };
}

/** One of the caller's requests, or null (another account's id looks exactly like a missing one). */
export async function getLog(userId: string, id: string): Promise<LogDetail | null> {
  if (!isPlausibleId(id)) return null;
  const db = await getDb();
  const row = await db.requestLog.findFirst({ where: { id, userId }, select: { ...listSelect, attempts: true } });
  if (!row) return null;
  const { attempts, ...rest } = row;
  return { ...toPublicLogEntry(rest), attempts: publicAttempts(attempts) as Prisma.JsonValue | null };
}

/** Like getLog, but answers 404 for the route handlers (400 for an id no request can have). */
export async function requireLog(userId: string, id: string): Promise<LogDetail> {
  if (!isPlausibleId(id)) throw new GatewayError('invalid_request', 'id is not a request id (1-200 characters, no control characters).', { param: 'id' });
  const log = await getLog(userId, id);
  if (!log) throw new GatewayError('not_found', 'No such request.');
  return log;
}

export interface KeyName {
  id: string;
  name: string;
  display: string;
  revoked: boolean;
}

export async function listKeyNames(userId: string): Promise<KeyName[]> {
  const db = await getDb();
  const rows = await db.apiKey.findMany({
    where: { userId },
    orderBy: { createdAt: 'desc' },
    select: { id: true, name: true, prefix: true, lastFour: true, revokedAt: true },
  });
  return rows.map((k) => ({ id: k.id, name: k.name, display: `${k.prefix}…${k.lastFour}`, revoked: k.revokedAt !== null }));
}

export const EXPORT_MAX_ROWS = 100_000;
const EXPORT_BATCH = 1_000;

/** CSV lines (header first) or JSONL of every filtered request, newest first, read in batches of 1,000; the totals last. */
export async function* logCsvLines(userId: string, filters: LogFilters, maxRows = EXPORT_MAX_ROWS, format: LogExportFormat = 'csv'): AsyncGenerator<string> {
  const keyNames = new Map((await listKeyNames(userId)).map((k) => [k.id, k.name]));
  // The member and project columns (docs/decisions/056) name them as well as giving their ids.
  const groups = await logGroupNames(userId);
  if (format === 'csv') yield csvRow(logCsvHeader);
  const totals = new LogTotals();
  let cursor: LogCursor | undefined;
  let written = 0;
  while (written < maxRows) {
    const page = await listLogs(userId, filters, { limit: Math.min(EXPORT_BATCH, maxRows - written), startingAfter: cursor });
    for (const e of page.data) totals.add(e);
    const name = (e: LogEntry) => (e.apiKeyId ? keyNames.get(e.apiKeyId) : undefined);
    if (page.data.length)
      yield page.data.map((e) => (format === 'csv' ? csvRow(logCsvValues(e, name(e), groups)) : logJsonLine(e, name(e), {}, groups))).join('');
    written += page.data.length;
    // A filtered page may stop its search before it is full (LOG_SCAN_BUDGET): its cursor goes on.
    if (!page.nextCursor) break;
    cursor = decodeCursor(page.nextCursor);
  }
  yield format === 'csv' ? csvRow(logTotalsCsvValues(totals)) : logTotalsJsonLine(totals);
}

/** Emails of the people and names of the projects an account's log rows may name. */
async function logGroupNames(userId: string): Promise<LogGroupNames> {
  const db = await getDb();
  const [people, projects] = await Promise.all([
    db.$queryRaw<{ id: string; email: string }[]>`
      SELECT u.id::text AS id, u.email FROM "User" u
      WHERE u.id IN (SELECT DISTINCT "createdById" FROM "ApiKey" WHERE "userId" = CAST(${userId} AS uuid) AND "createdById" IS NOT NULL)`,
    db.project.findMany({ where: { userId }, select: { id: true, name: true } }),
  ]);
  return { members: new Map(people.map((p) => [p.id, p.email])), projects: new Map(projects.map((p) => [p.id, p.name])) };
}

export interface UsageTotals {
  requests: number;
  failed: number;
  spendUsd: bigint;
  spendCny: bigint;
  promptTokens: number;
  completionTokens: number;
}

export interface DailyUsage extends UsageTotals {
  /** UTC day, YYYY-MM-DD. */
  date: string;
}

export interface TotalsRow {
  requests: number;
  failed: number;
  usd: string;
  cny: string;
  prompt: string;
  completion: string;
}

// Timestamps are stored as UTC wall time (timestamp without time zone); bounds are passed as ISO text
// and cast, so the session time zone of the connection never shifts them.
export const ts = (d: Date) => Prisma.sql`CAST(${d.toISOString()} AS timestamp)`;

export const totalsColumns = Prisma.sql`
  count(*)::int AS requests,
  (count(*) FILTER (WHERE ${failedSql}))::int AS failed,
  coalesce(sum("costUsd"), 0)::text AS usd,
  coalesce(sum("costCny"), 0)::text AS cny,
  coalesce(sum("promptTokens"), 0)::text AS prompt,
  coalesce(sum("completionTokens"), 0)::text AS completion`;

export function toTotals(row: TotalsRow | undefined): UsageTotals {
  if (!row) return { requests: 0, failed: 0, spendUsd: 0n, spendCny: 0n, promptTokens: 0, completionTokens: 0 };
  return {
    requests: Number(row.requests),
    failed: Number(row.failed),
    spendUsd: picoText(row.usd),
    spendCny: picoText(row.cny),
    promptTokens: Number(row.prompt),
    completionTokens: Number(row.completion),
  };
}

/** Totals of the caller's requests in [from, to). */
export async function usageTotals(userId: string, from: Date, to: Date): Promise<UsageTotals> {
  const db = await getDb();
  const rows = await db.$queryRaw<TotalsRow[]>`
    SELECT ${totalsColumns}
    FROM "RequestLog"
    WHERE "userId" = CAST(${userId} AS uuid) AND "createdAt" >= ${ts(from)} AND "createdAt" < ${ts(to)}`;
  return toTotals(rows[0]);
}

export const startOfUtcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
export const startOfUtcMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
const DAY_MS = 86_400_000;

/** The `days` whole UTC days ending with today's: [start, end). */
function lastDays(days: number, now: Date): { start: Date; end: Date } {
  const end = new Date(startOfUtcDay(now).getTime() + DAY_MS);
  return { start: new Date(end.getTime() - days * DAY_MS), end };
}

/** One entry per day from `start`, oldest first, from rows keyed by day; days without a row are zero. */
function byDays(start: Date, days: number, rows: (TotalsRow & { day: string })[]): DailyUsage[] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return Array.from({ length: days }, (_, i) => {
    const date = new Date(start.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    return { date, ...toTotals(byDay.get(date)) };
  });
}

/** Per-UTC-day totals for the `days` days ending today, oldest first; days without requests are zero. */
export async function dailyUsage(userId: string, days: number, now = new Date()): Promise<DailyUsage[]> {
  const { start, end } = lastDays(days, now);
  const db = await getDb();
  const rows = await db.$queryRaw<(TotalsRow & { day: string })[]>`
    SELECT to_char(date_trunc('day', "createdAt"), 'YYYY-MM-DD') AS day, ${totalsColumns}
    FROM "RequestLog"
    WHERE "userId" = CAST(${userId} AS uuid) AND "createdAt" >= ${ts(start)} AND "createdAt" < ${ts(end)}
    GROUP BY 1
    ORDER BY 1`;
  return byDays(start, days, rows);
}

// The same totals from the daily rollup (UsageDaily, kept by the batch writer with the log itself):
// the overview's month, today and 30-day chart read a few rows per day instead of every request.
export const rollupColumns = Prisma.sql`
  coalesce(sum("requests"), 0)::int AS requests,
  coalesce(sum("failed"), 0)::int AS failed,
  coalesce(sum("costUsd"), 0)::text AS usd,
  coalesce(sum("costCny"), 0)::text AS cny,
  coalesce(sum("promptTokens"), 0)::text AS prompt,
  coalesce(sum("completionTokens"), 0)::text AS completion`;

/** A UTC day as a date parameter (the rollup's day column). */
export const utcDay = (d: Date) => Prisma.sql`CAST(${d.toISOString().slice(0, 10)} AS date)`;

/** usageTotals over whole UTC days [fromDay, toDay) (both at 00:00 UTC), from the daily rollup. */
export async function usageTotalsByDay(userId: string, fromDay: Date, toDay: Date): Promise<UsageTotals> {
  const db = await getDb();
  const rows = await db.$queryRaw<TotalsRow[]>`
    SELECT ${rollupColumns}
    FROM "UsageDaily"
    WHERE "userId" = CAST(${userId} AS uuid) AND "day" >= ${utcDay(fromDay)} AND "day" < ${utcDay(toDay)}`;
  return toTotals(rows[0]);
}

/** dailyUsage from the daily rollup: the same answer, without reading raw rows. */
export async function dailyUsageFromRollup(userId: string, days: number, now = new Date()): Promise<DailyUsage[]> {
  const { start, end } = lastDays(days, now);
  const db = await getDb();
  const rows = await db.$queryRaw<(TotalsRow & { day: string })[]>`
    SELECT to_char("day", 'YYYY-MM-DD') AS day, ${rollupColumns}
    FROM "UsageDaily"
    WHERE "userId" = CAST(${userId} AS uuid) AND "day" >= ${utcDay(start)} AND "day" < ${utcDay(end)}
    GROUP BY 1
    ORDER BY 1`;
  return byDays(start, days, rows);
}

export type LedgerKindName = 'recharge' | 'usage' | 'admin_credit' | 'refund';

export interface LedgerItem {
  /** Stable key: `e:<entry id>` for single entries, `u:<day>` for a day of usage. */
  key: string;
  kind: LedgerKindName;
  /** The entry's time; for a usage day, its last request. */
  at: Date;
  /** UTC day of a usage group, else null. */
  day: string | null;
  amountUsd: bigint;
  /** Ledger entries folded into this item (requests, for usage). */
  entries: number;
  balanceAfterUsd: bigint;
  reference: string | null;
  note: string | null;
}

export interface LedgerPage {
  data: LedgerItem[];
  /** Pass as `before` for older items; null when there are none. */
  nextCursor: string | null;
}

export interface LedgerCursor {
  at: string;
  key: string;
}

export function encodeLedgerCursor(c: LedgerCursor): string {
  return Buffer.from(`${c.at}|${c.key}`).toString('base64url');
}

export function decodeLedgerCursor(value: string): LedgerCursor {
  const invalid = () => new GatewayError('invalid_request', 'before is not a valid cursor. Use next_cursor of a previous page.', { param: 'before' });
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(value)) throw invalid();
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([eu]:[0-9-]{1,20})$/.exec(Buffer.from(value, 'base64url').toString('utf8'));
  // The time must be a real instant (9999-99-99T… matches the pattern; PostgreSQL's cast refuses it).
  const at = match ? new Date(match[1]) : null;
  if (!match || !at || !isQueryableDate(at) || at.toISOString() !== match[1]) throw invalid();
  return { at: match[1], key: match[2] };
}

interface LedgerRow {
  key: string;
  kind: LedgerKindName;
  at: string;
  day: string | null;
  amount: string;
  entries: number;
  balance_after: string;
  reference: string | null;
  note: string | null;
}

/** Recharges, credits and refunds one by one, usage folded into one item per UTC day; newest first. */
export async function ledgerHistory(userId: string, opts: { limit: number; before?: LedgerCursor }): Promise<LedgerPage> {
  if (opts.before && !isQueryableDate(new Date(opts.before.at))) throw new GatewayError('invalid_request', 'before is out of range.', { param: 'before' });
  const db = await getDb();
  const uid = Prisma.sql`CAST(${userId} AS uuid)`;
  const cursor = opts.before ? Prisma.sql`WHERE (t.at, t.key) < (CAST(${opts.before.at} AS timestamp), ${opts.before.key})` : Prisma.empty;
  const rows = await db.$queryRaw<LedgerRow[]>`
    SELECT t.key, t.kind, to_char(t.at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, t.day, t.amount, t.entries,
           t.balance_after, t.reference, t.note
    FROM (
      SELECT 'e:' || lpad(id::text, 19, '0') AS key, kind::text AS kind, "createdAt" AS at, NULL::text AS day,
             "amountUsd"::text AS amount, 1 AS entries, "balanceAfterUsd"::text AS balance_after, reference, note
      FROM "LedgerEntry"
      WHERE "userId" = ${uid} AND kind <> 'usage'
      UNION ALL
      SELECT 'u:' || to_char(date_trunc('day', "createdAt"), 'YYYY-MM-DD'), 'usage', max("createdAt"),
             to_char(date_trunc('day', "createdAt"), 'YYYY-MM-DD'), sum("amountUsd")::text, count(*)::int,
             ((array_agg("balanceAfterUsd" ORDER BY "createdAt" DESC, id DESC))[1])::text, NULL, NULL
      FROM "LedgerEntry"
      WHERE "userId" = ${uid} AND kind = 'usage'
      GROUP BY date_trunc('day', "createdAt")
    ) t
    ${cursor}
    ORDER BY t.at DESC, t.key DESC
    LIMIT ${opts.limit + 1}`;
  const data = rows.slice(0, opts.limit).map((r): LedgerItem => ({
    key: r.key,
    kind: r.kind,
    at: new Date(r.at),
    day: r.day,
    amountUsd: picoText(r.amount),
    entries: Number(r.entries),
    balanceAfterUsd: picoText(r.balance_after),
    reference: r.reference,
    note: r.note,
  }));
  const last = data[data.length - 1];
  return {
    data,
    nextCursor: rows.length > opts.limit && last ? encodeLedgerCursor({ at: last.at.toISOString(), key: last.key }) : null,
  };
}

export interface Account {
  id: string;
  email: string;
  tier: 'free' | 'pro' | 'vip' | 'enterprise';
  status: 'active' | 'suspended';
  tierLocked: boolean;
  balanceUsd: bigint;
  limits: Prisma.JsonValue | null;
  /** Sessions signed in before this are refused (lib/auth/session-epoch.ts). */
  sessionsValidFrom: Date | null;
}

export async function getAccount(userId: string): Promise<Account | null> {
  const db = await getDb();
  const user = await db.user.findUnique({
    where: { id: userId },
    select: { id: true, email: true, tier: true, status: true, tierLocked: true, balanceUsd: true, limits: true, sessionsValidFrom: true },
  });
  return user ? { ...user, balanceUsd: pico(user.balanceUsd) } : null;
}
