import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { codedError } from '@/lib/errors';
import { decimalText } from '@/lib/format';
import { parseTimeZone, zonedMidnight, type SearchParamsLike } from './filters';
import { env } from '@/lib/env';
import { NO_KEY } from '@/lib/billing/writer';
import { listKeyNames, rollupColumns, toTotals, totalsColumns, ts, utcDay, type TotalsRow, type UsageTotals } from './queries';
import { csvRow } from './csv';
import { projectNames } from '@/lib/projects/queries';

/** Emails of the people who made the account's keys (its members, former ones too; the person of a personal account). */
async function memberEmails(userId: string): Promise<Map<string, string>> {
  const db = await getDb();
  const rows = await db.$queryRaw<{ id: string; email: string }[]>`
    SELECT u.id::text AS id, u.email FROM "User" u
    WHERE u.id IN (SELECT DISTINCT "createdById" FROM "ApiKey" WHERE "userId" = CAST(${userId} AS uuid) AND "createdById" IS NOT NULL)
       OR u.id IN (SELECT "userId" FROM "Membership" WHERE "orgId" = CAST(${userId} AS uuid))`;
  return new Map(rows.map((r) => [r.id, r.email]));
}

// The usage report: spend, requests, tokens and failures per UTC day over a date range, optionally
// broken down by model or by API key. One grouped query over the daily rollup (UsageDaily: account x
// model x key x day, kept by the batch writer with the log), never the raw rows: it answers the same
// at any log size and for days the log's retention dropped.

export type UsageGroupBy = 'none' | 'model' | 'key' | 'member' | 'project';

export interface UsageQuery {
  /** First day, inclusive (a calendar day of `tz`). */
  from: string;
  /** Last day, inclusive. */
  to: string;
  groupBy: UsageGroupBy;
  /** The viewer's IANA zone the days are read in (`tz`; UTC when absent). */
  tz?: string;
}

export interface UsageGroup extends UsageTotals {
  /** Model name, API key id, or "" for everything (groupBy none); "(none)" for requests without one. */
  key: string;
  label: string;
}

export interface UsageDay extends UsageTotals {
  date: string;
  groups: UsageGroup[];
}

export interface UsageReport {
  query: UsageQuery;
  /**
   * The zone its days are: the query's, or UTC when the range reaches past the request log's
   * retention (only the UTC daily rollup holds those days).
   */
  zone: string;
  totals: UsageTotals;
  /** Every day of the range, oldest first; days without requests are zero. */
  days: UsageDay[];
  /** Totals per group over the range, highest spend first. */
  groups: UsageGroup[];
}

const DAY_MS = 86_400_000;
export const MAX_RANGE_DAYS = 366;
const dayPattern = /^\d{4}-\d{2}-\d{2}$/;

function parseDay(value: string, name: 'from' | 'to'): Date {
  const date = new Date(`${value}T00:00:00.000Z`);
  if (
    !dayPattern.test(value) ||
    Number.isNaN(date.getTime()) ||
    date.toISOString().slice(0, 10) !== value ||
    date.getUTCFullYear() < 1970 ||
    date.getUTCFullYear() > 9998
  ) {
    throw codedError('invalid_request', 'usage.day', { name }, { param: name });
  }
  return date;
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** Today's calendar day in `zone`, as a UTC midnight (the day arithmetic below works on those). */
export function localToday(now: Date, zone: string): Date {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: 'numeric', day: 'numeric' }).formatToParts(now).map((p) => [p.type, p.value]),
  );
  return new Date(Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day)));
}

/**
 * from, to (days of `tz`, inclusive; default the 30 days ending today), group_by (none, model, key)
 * and tz (the viewer's IANA zone; default UTC).
 */
export function parseUsageQuery(params: SearchParamsLike, now = new Date()): UsageQuery {
  const tz = parseTimeZone(params.get('tz')?.trim() || undefined);
  const today = localToday(now, tz);
  const toParam = params.get('to')?.trim();
  const fromParam = params.get('from')?.trim();
  const to = toParam ? parseDay(toParam, 'to') : today;
  const from = fromParam ? parseDay(fromParam, 'from') : new Date(to.getTime() - 29 * DAY_MS);
  if (from > to) throw codedError('invalid_request', 'usage.from_after_to', undefined, { param: 'from' });
  if ((to.getTime() - from.getTime()) / DAY_MS + 1 > MAX_RANGE_DAYS) {
    throw codedError('invalid_request', 'usage.range', { days: MAX_RANGE_DAYS }, { param: 'from' });
  }
  // `group` is accepted for group_by too (member and project: docs/decisions/056).
  const group = (params.get('group_by')?.trim() || params.get('group')?.trim() || 'none').toLowerCase();
  if (!['none', 'model', 'key', 'day', 'member', 'project'].includes(group)) {
    throw codedError('invalid_request', 'usage.group_by', undefined, { param: 'group_by' });
  }
  return { from: isoDay(from), to: isoDay(to), groupBy: group === 'day' ? 'none' : (group as UsageGroupBy), tz };
}

const NONE = '(none)';

function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    requests: a.requests + b.requests,
    failed: a.failed + b.failed,
    spendUsd: a.spendUsd + b.spendUsd,
    spendCny: a.spendCny + b.spendCny,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
  };
}

const zero = (): UsageTotals => toTotals(undefined);

/** Grouped rows per UTC day from the daily rollup (any age). */
function rollupRows(userId: string, query: UsageQuery, start: Date, end: Date) {
  if (query.groupBy === 'member') return memberRollupRows(userId, start, end);
  if (query.groupBy === 'project') return projectRollupRows(userId, start, end);
  const groupExpr =
    query.groupBy === 'model'
      ? Prisma.sql`CASE WHEN "model" = '' THEN ${NONE} ELSE "model" END`
      : query.groupBy === 'key'
        ? Prisma.sql`CASE WHEN "apiKeyId" = CAST(${NO_KEY} AS uuid) THEN ${NONE} ELSE "apiKeyId"::text END`
        : Prisma.sql`''`;
  return getDb().then(
    (db) => db.$queryRaw<(TotalsRow & { day: string; grp: string })[]>`
      SELECT to_char("day", 'YYYY-MM-DD') AS day, ${groupExpr} AS grp, ${rollupColumns}
      FROM "UsageDaily"
      WHERE "userId" = CAST(${userId} AS uuid) AND "day" >= ${utcDay(start)} AND "day" < ${utcDay(end)}
      GROUP BY 1, 2
      ORDER BY 1, 2`,
  );
}

/** By the member who made each key (fixed per key, docs/decisions/056): the rollup by key, keys joined. */
function memberRollupRows(userId: string, start: Date, end: Date) {
  return getDb().then(
    (db) => db.$queryRaw<(TotalsRow & { day: string; grp: string })[]>`
      SELECT to_char(u."day", 'YYYY-MM-DD') AS day, COALESCE(k."createdById"::text, ${NONE}) AS grp, ${rollupColumns}
      FROM "UsageDaily" u LEFT JOIN "ApiKey" k ON k.id = u."apiKeyId"
      WHERE u."userId" = CAST(${userId} AS uuid) AND u."day" >= ${utcDay(start)} AND u."day" < ${utcDay(end)}
      GROUP BY 1, 2
      ORDER BY 1, 2`,
  );
}

/**
 * By project: the project rollup (UsageDailyProject), and per day what the account's rollup holds
 * beyond it as "(none)" (requests of keys in no project).
 */
function projectRollupRows(userId: string, start: Date, end: Date) {
  const range = Prisma.sql`"userId" = CAST(${userId} AS uuid) AND "day" >= ${utcDay(start)} AND "day" < ${utcDay(end)}`;
  const sums = Prisma.sql`sum("requests") AS r, sum("failed") AS f, sum("costUsd") AS u, sum("costCny") AS y, sum("promptTokens") AS p, sum("completionTokens") AS c`;
  return getDb().then(
    (db) => db.$queryRaw<(TotalsRow & { day: string; grp: string })[]>`
      WITH t AS (SELECT "day", ${sums} FROM "UsageDaily" WHERE ${range} GROUP BY 1),
      pr AS (SELECT "day", "projectId"::text AS grp, ${sums} FROM "UsageDailyProject" WHERE ${range} GROUP BY 1, 2),
      ps AS (SELECT "day", sum(r) AS r, sum(f) AS f, sum(u) AS u, sum(y) AS y, sum(p) AS p, sum(c) AS c FROM pr GROUP BY 1),
      rest AS (
        SELECT t."day", ${NONE} AS grp, t.r - COALESCE(ps.r, 0) AS r, t.f - COALESCE(ps.f, 0) AS f, t.u - COALESCE(ps.u, 0) AS u,
               t.y - COALESCE(ps.y, 0) AS y, t.p - COALESCE(ps.p, 0) AS p, t.c - COALESCE(ps.c, 0) AS c
        FROM t LEFT JOIN ps ON ps."day" = t."day"
      )
      SELECT to_char("day", 'YYYY-MM-DD') AS day, grp, r::int AS requests, f::int AS failed, u::text AS usd, y::text AS cny, p::text AS prompt, c::text AS completion
      FROM (SELECT * FROM pr UNION ALL SELECT * FROM rest WHERE r > 0 OR u <> 0) x
      ORDER BY 1, 2`,
  );
}

/**
 * Grouped rows per calendar day of `zone`, from the request log itself (the rollup is per UTC day):
 * the stored UTC wall time read as UTC, then as the zone's local time. Same columns as the rollup.
 */
function zonedRows(userId: string, query: UsageQuery, zone: string) {
  const start = zonedMidnight(query.from, zone);
  const end = zonedMidnight(isoDay(new Date(new Date(`${query.to}T00:00:00.000Z`).getTime() + DAY_MS)), zone);
  const model = Prisma.sql`COALESCE("modelServed", "modelRequested", '')`;
  const groupExpr =
    query.groupBy === 'model'
      ? Prisma.sql`CASE WHEN ${model} = '' THEN ${NONE} ELSE ${model} END`
      : query.groupBy === 'key'
        ? Prisma.sql`CASE WHEN "apiKeyId" IS NULL THEN ${NONE} ELSE "apiKeyId"::text END`
        : query.groupBy === 'member'
          ? Prisma.sql`COALESCE("memberId"::text, ${NONE})`
          : query.groupBy === 'project'
            ? Prisma.sql`COALESCE("projectId"::text, ${NONE})`
            : Prisma.sql`''`;
  return getDb().then(
    (db) => db.$queryRaw<(TotalsRow & { day: string; grp: string })[]>`
      SELECT to_char(("createdAt" AT TIME ZONE 'UTC') AT TIME ZONE ${zone}, 'YYYY-MM-DD') AS day, ${groupExpr} AS grp, ${totalsColumns}
      FROM "RequestLog"
      WHERE "userId" = CAST(${userId} AS uuid) AND "createdAt" >= ${ts(start)} AND "createdAt" < ${ts(end)}
      GROUP BY 1, 2
      ORDER BY 1, 2`,
  );
}

/** The zone a report can be in: the query's while the whole range is within the request log's retention. */
export function reportZone(query: UsageQuery, now = Date.now(), retention = env.REQUEST_LOG_RETENTION_DAYS): string {
  if (!query.tz || query.tz === 'UTC') return 'UTC';
  if (retention === 0) return query.tz;
  // The oldest whole UTC day the log still holds (partitions are dropped by UTC day): the range's
  // first instant in the zone must not be older.
  const oldest = Math.floor(now / DAY_MS) * DAY_MS - (retention - 1) * DAY_MS;
  return zonedMidnight(query.from, query.tz).getTime() >= oldest ? query.tz : 'UTC';
}

export async function usageReport(userId: string, query: UsageQuery): Promise<UsageReport> {
  const start = new Date(`${query.from}T00:00:00.000Z`);
  const end = new Date(new Date(`${query.to}T00:00:00.000Z`).getTime() + DAY_MS);
  const zone = reportZone(query);
  const [rows, keys, names] = await Promise.all([
    zone === 'UTC' ? rollupRows(userId, query, start, end) : zonedRows(userId, query, zone),
    query.groupBy === 'key' ? listKeyNames(userId) : Promise.resolve([]),
    query.groupBy === 'member' ? memberEmails(userId) : query.groupBy === 'project' ? projectNames(userId) : Promise.resolve(new Map<string, string>()),
  ]);
  const keyLabels = new Map(keys.map((k) => [k.id, `${k.name} (${k.display})`]));
  const labelOf = (key: string) =>
    query.groupBy === 'key'
      ? key === NONE
        ? 'No key'
        : (keyLabels.get(key) ?? 'Deleted key')
      : query.groupBy === 'member'
        ? key === NONE
          ? 'No member'
          : (names.get(key) ?? 'Former member')
        : query.groupBy === 'project'
          ? key === NONE
            ? 'No project'
            : (names.get(key) ?? 'Deleted project')
          : query.groupBy === 'model'
            ? key
            : 'All requests';

  const byDay = new Map<string, UsageGroup[]>();
  const groupTotals = new Map<string, UsageTotals>();
  for (const row of rows) {
    const totals = toTotals(row);
    const list = byDay.get(row.day) ?? [];
    list.push({ key: row.grp, label: labelOf(row.grp), ...totals });
    byDay.set(row.day, list);
    groupTotals.set(row.grp, addTotals(groupTotals.get(row.grp) ?? zero(), totals));
  }
  const dayCount = Math.round((end.getTime() - start.getTime()) / DAY_MS);
  const days: UsageDay[] = Array.from({ length: dayCount }, (_, i) => {
    const date = isoDay(new Date(start.getTime() + i * DAY_MS));
    const groups = byDay.get(date) ?? [];
    return { date, groups, ...groups.reduce((sum, g) => addTotals(sum, g), zero()) };
  });
  const groups = [...groupTotals.entries()]
    .map(([key, t]) => ({ key, label: labelOf(key), ...t }))
    .sort((a, b) => (b.spendUsd > a.spendUsd ? 1 : b.spendUsd < a.spendUsd ? -1 : b.requests - a.requests || a.key.localeCompare(b.key)));
  return { query, zone, totals: days.reduce((sum, d) => addTotals(sum, d), zero()), days, groups };
}

function totalsJson(t: UsageTotals) {
  return {
    requests: t.requests,
    failed: t.failed,
    spend_usd: decimalText(t.spendUsd),
    spend_cny: decimalText(t.spendCny),
    prompt_tokens: t.promptTokens,
    completion_tokens: t.completionTokens,
  };
}

export function usageReportJson(r: UsageReport) {
  const group = (g: UsageGroup) => ({ key: g.key, label: g.label, ...totalsJson(g) });
  return {
    from: r.query.from,
    to: r.query.to,
    time_zone: r.zone,
    group_by: r.query.groupBy,
    totals: totalsJson(r.totals),
    groups: r.groups.map(group),
    days: r.days.map((d) => ({ date: d.date, ...totalsJson(d), groups: r.query.groupBy === 'none' ? undefined : d.groups.map(group) })),
  };
}

export const usageCsvHeader = ['date', 'group', 'group_label', 'requests', 'failed', 'prompt_tokens', 'completion_tokens', 'spend_usd', 'spend_cny'] as const;

/** One line per day (and group), money exact: the figures of the page, unrounded. */
export function usageCsv(r: UsageReport): string {
  const lines = [csvRow(usageCsvHeader)];
  for (const d of r.days) {
    const rows = r.query.groupBy === 'none' ? [{ key: '', label: 'All requests', ...(d as UsageTotals) }] : d.groups;
    for (const g of rows) {
      lines.push(csvRow([d.date, g.key, g.label, g.requests, g.failed, g.promptTokens, g.completionTokens, decimalText(g.spendUsd), decimalText(g.spendCny)]));
    }
  }
  return lines.join('');
}
