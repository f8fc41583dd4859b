import { GatewayError } from '@/lib/errors';

// Query-string parsing shared by the logs API, the CSV export and the logs page.

/** `ok`, `client_closed` and other outcomes match exactly; `error` is every failure; digits match the HTTP status. */
export type StatusFilter =
  | { kind: 'outcome'; outcome: string }
  | { kind: 'failed' }
  | { kind: 'http'; status: number }
  | { kind: 'http_class'; hundreds: number };

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
const dayPattern = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

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
  throw new GatewayError('invalid_request', 'status must be ok, error, client_closed, an HTTP status (429) or a class (5xx).', {
    param: 'status',
  });
}

/** A day (YYYY-MM-DD, UTC) or an ISO timestamp. A bare day as the upper bound includes that whole day. */
export function parseBound(value: string, name: 'from' | 'to'): Date {
  const isDay = dayPattern.test(value);
  const date = new Date(isDay ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(date.getTime())) {
    throw new GatewayError('invalid_request', `${name} must be a date (YYYY-MM-DD) or an ISO timestamp.`, { param: name });
  }
  return isDay && name === 'to' ? new Date(date.getTime() + DAY_MS) : date;
}

export function parseLogFilters(params: SearchParamsLike): LogFilters {
  const filters: LogFilters = {};
  const key = param(params, 'key');
  if (key) {
    if (!uuidPattern.test(key)) throw new GatewayError('invalid_request', 'key must be an API key id.', { param: 'key' });
    filters.keyId = key.toLowerCase();
  }
  const model = param(params, 'model');
  if (model) {
    if (model.length > 200) throw new GatewayError('invalid_request', 'model is too long.', { param: 'model' });
    filters.model = model;
  }
  const status = param(params, 'status');
  if (status) filters.status = parseStatus(status);
  const from = param(params, 'from');
  if (from) filters.from = parseBound(from, 'from');
  const to = param(params, 'to');
  if (to) filters.to = parseBound(to, 'to');
  if (filters.from && filters.to && filters.from >= filters.to) {
    throw new GatewayError('invalid_request', 'from must be before to.', { param: 'from' });
  }
  return filters;
}

/** The filter params again, for links (pagination, export) that must keep them. */
export function filterQuery(params: SearchParamsLike): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of ['key', 'model', 'status', 'from', 'to']) {
    const value = param(params, name);
    if (value) out.set(name, value);
  }
  return out;
}

export function parseLimit(value: string | null | undefined, fallback: number, max: number): number {
  if (value === null || value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new GatewayError('invalid_request', `limit must be an integer from 1 to ${max}.`, { param: 'limit' });
  }
  return n;
}

// Cursors are opaque to clients: base64url of "<epoch ms>:<id>".
export function encodeCursor(c: LogCursor): string {
  return Buffer.from(`${c.createdAt.getTime()}:${c.id}`).toString('base64url');
}

export function decodeCursor(value: string, name = 'cursor'): LogCursor {
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const match = /^(\d{1,15}):(.{1,200})$/.exec(text);
  if (!match) throw new GatewayError('invalid_request', `${name} is not a valid cursor.`, { param: name });
  return { createdAt: new Date(Number(match[1])), id: match[2] };
}
