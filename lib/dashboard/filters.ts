import { codedError } from '@/lib/errors';

// Query-string parsing shared by the logs API, the CSV export and the logs page.

/** `ok`, `client_closed` and other outcomes match exactly; `error` is every failure; digits match the HTTP status. */
export type StatusFilter =
  { kind: 'outcome'; outcome: string } | { kind: 'failed' } | { kind: 'http'; status: number } | { kind: 'http_class'; hundreds: number };

export interface LogFilters {
  keyId?: string;
  model?: string;
  status?: StatusFilter;
  /** Inclusive lower bound. */
  from?: Date;
  /** Exclusive upper bound. */
  to?: Date;
}

export interface LogCursor {
  createdAt: Date;
  id: string;
}

export type SearchParamsLike = { get(name: string): string | null };

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const dayPattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const timestampPattern = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
/** Control characters (NUL above all) never occur in ids or model names, and PostgreSQL text refuses NUL. */
const controlChar = /[\u0000-\u001f\u007f]/;
const DAY_MS = 86_400_000;

/**
 * The instants a filter or cursor may name: 1970 to the end of 9999. JavaScript dates reach year
 * ±275760 and PostgreSQL timestamps 294276, but Prisma sends a date as ISO text, which for years
 * past 9999 (or before 0) has a sign and six digits that PostgreSQL refuses: a 500 before this bound.
 */
export const MIN_QUERY_TIME = Date.UTC(1970, 0, 1);
export const MAX_QUERY_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Whether a date can be sent to the database as a bound (see MIN_QUERY_TIME). */
export function isQueryableDate(date: Date): boolean {
  const t = date.getTime();
  return Number.isFinite(t) && t >= MIN_QUERY_TIME && t <= MAX_QUERY_TIME;
}

/** An id as the request log stores it: 1-200 characters, no control characters. */
export function isPlausibleId(id: string): boolean {
  return id.length > 0 && id.length <= 200 && !controlChar.test(id);
}

/** A real calendar day (2026-02-30 is not one, though Date would roll it over to March). */
function isCalendarDay(y: string, m: string, d: string): boolean {
  const month = Number(m);
  const day = Number(d);
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
}

function param(params: SearchParamsLike, name: string): string | undefined {
  const value = params.get(name)?.trim();
  return value ? value : undefined;
}

export function parseStatus(value: string): StatusFilter {
  const v = value.toLowerCase();
  if (v === 'error' || v === 'failed') return { kind: 'failed' };
  if (/^[1-5]\d\d$/.test(v)) return { kind: 'http', status: Number(v) };
  if (/^[1-5]xx$/.test(v)) return { kind: 'http_class', hundreds: Number(v[0]) };
  if (/^[a-z_]{1,32}$/.test(v)) return { kind: 'outcome', outcome: v };
  throw codedError('invalid_request', 'filter.status', undefined, { param: 'status' });
}

/** Whether `zone` is an IANA time zone this runtime knows (`Asia/Shanghai`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  if (zone.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The `tz` parameter: the viewer's IANA zone, in which bare days are read (UTC when absent). */
export function parseTimeZone(value: string | undefined): string {
  if (value === undefined) return 'UTC';
  if (!isTimeZone(value)) throw codedError('invalid_request', 'filter.tz', undefined, { param: 'tz' });
  return value;
}

/** Milliseconds `zone` is ahead of UTC at instant `ms`. */
function zoneOffset(ms: number, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, Number(p.value)]),
  );
  const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return asUtc - (ms - (ms % 1000));
}

/** The instant local midnight begins day `y-m-d` in `zone` (DST-safe: the offset is read at the result). */
export function zonedMidnight(day: string, zone: string): Date {
  const utc = new Date(`${day}T00:00:00.000Z`).getTime();
  if (zone === 'UTC') return new Date(utc);
  const first = utc - zoneOffset(utc, zone);
  return new Date(utc - zoneOffset(first, zone));
}

/**
 * A day (YYYY-MM-DD, in the viewer's `zone`) or an ISO timestamp. A bare day as the upper bound
 * includes that whole day.
 */
export function parseBound(value: string, name: 'from' | 'to', zone = 'UTC'): Date {
  const invalid = () => codedError('invalid_request', 'filter.bound', { name }, { param: name });
  const day = dayPattern.exec(value);
  const parts = day ?? timestampPattern.exec(value);
  if (!parts || !isCalendarDay(parts[1], parts[2], parts[3])) throw invalid();
  const date = day ? zonedMidnight(value, zone) : new Date(value);
  if (!isQueryableDate(date)) throw invalid();
  if (!day || name === 'from') return date;
  // The whole of the last day of 9999 as an upper bound stops at the last queryable instant.
  const next = new Date(`${value}T00:00:00.000Z`).getTime() + DAY_MS;
  if (next > MAX_QUERY_TIME) return new Date(MAX_QUERY_TIME);
  return new Date(Math.min(zonedMidnight(new Date(next).toISOString().slice(0, 10), zone).getTime(), MAX_QUERY_TIME));
}

export function parseLogFilters(params: SearchParamsLike): LogFilters {
  const filters: LogFilters = {};
  const key = param(params, 'key');
  if (key) {
    if (!uuidPattern.test(key)) throw codedError('invalid_request', 'filter.key', undefined, { param: 'key' });
    filters.keyId = key.toLowerCase();
  }
  const model = param(params, 'model');
  if (model) {
    if (model.length > 200) throw codedError('invalid_request', 'filter.model_long', undefined, { param: 'model' });
    if (controlChar.test(model)) throw codedError('invalid_request', 'filter.model_control', undefined, { param: 'model' });
    filters.model = model;
  }
  const status = param(params, 'status');
  if (status) filters.status = parseStatus(status);
  const zone = parseTimeZone(param(params, 'tz'));
  const from = param(params, 'from');
  if (from) filters.from = parseBound(from, 'from', zone);
  const to = param(params, 'to');
  if (to) filters.to = parseBound(to, 'to', zone);
  if (filters.from && filters.to && filters.from >= filters.to) {
    throw codedError('invalid_request', 'filter.from_before_to', undefined, { param: 'from' });
  }
  return filters;
}

/** The filter params again, for links (pagination, export) that must keep them. */
export function filterQuery(params: SearchParamsLike): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of ['key', 'model', 'status', 'from', 'to', 'tz']) {
    const value = param(params, name);
    if (value) out.set(name, value);
  }
  return out;
}

export function parseLimit(value: string | null | undefined, fallback: number, max: number): number {
  if (value === null || value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw codedError('invalid_request', 'filter.limit', { max }, { param: 'limit' });
  }
  return n;
}

// Cursors are opaque to clients: base64url of "<epoch ms>:<id>".
export function encodeCursor(c: LogCursor): string {
  return Buffer.from(`${c.createdAt.getTime()}:${c.id}`).toString('base64url');
}

export function decodeCursor(value: string, name = 'cursor'): LogCursor {
  const invalid = () => codedError('invalid_request', 'filter.cursor', { name }, { param: name });
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(value)) throw invalid();
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const match = /^(\d{1,15}):(.{1,200})$/s.exec(text);
  if (!match) throw invalid();
  const createdAt = new Date(Number(match[1]));
  if (!isQueryableDate(createdAt) || !isPlausibleId(match[2])) throw invalid();
  return { createdAt, id: match[2] };
}
