import { getConfig } from '@/lib/config';
import { getDb } from '@/lib/db';
import { codedError, GatewayError } from '@/lib/errors';
import { usdToPico, formatPico } from '@/lib/money';
import { csvRow } from '@/lib/dashboard/csv';

// Reconciliation (docs/decisions/036-reconciliation-and-caches.md): what the gateway recorded per
// channel, UTC day and model (from the request log: every request a channel served, with the token
// classes as the upstream reported them and the cost we billed), and its comparison with a
// provider's usage export (OpenAI's usage, Anthropic's messages usage report, both as CSV) per day
// and model. Our "uncached input" is the prompt tokens billed at the input price (cache reads and
// writes apart), the same split both providers' reports make.

const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** The longest range a report covers. */
export const MAX_RECONCILE_DAYS = 366;
/** The largest export accepted (a year of daily rows per model is far less). */
export const MAX_EXPORT_BYTES = 5 * 1024 * 1024;

export interface TokenClasses {
  uncachedInput: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export interface RecordedRow extends TokenClasses {
  day: string;
  channel: string;
  protocol: string;
  model: string;
  requests: number;
  costPico: bigint;
}

function parseDay(value: string | null | undefined, name: 'from' | 'to'): Date | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  const d = new Date(`${v}T00:00:00.000Z`);
  if (!DAY.test(v) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) {
    throw new GatewayError('invalid_request', `${name} must be a day as YYYY-MM-DD (UTC).`, { param: name });
  }
  return d;
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** from and to (UTC days, inclusive): by default the 30 days ending today. */
export function reconcileRange(from: string | null | undefined, to: string | null | undefined, now = new Date()): { from: string; to: string } {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const end = parseDay(to, 'to') ?? today;
  const start = parseDay(from, 'from') ?? new Date(end.getTime() - 29 * DAY_MS);
  if (start > end) throw new GatewayError('invalid_request', 'from must not be after to.', { param: 'from' });
  if ((end.getTime() - start.getTime()) / DAY_MS + 1 > MAX_RECONCILE_DAYS) {
    throw new GatewayError('invalid_request', `The range may span at most ${MAX_RECONCILE_DAYS} days.`, { param: 'from' });
  }
  return { from: isoDay(start), to: isoDay(end) };
}

/** What every channel served per UTC day and model in [from, to] (response-cache hits, served by no channel, are not in it). */
export async function recordedUsage(range: { from: string; to: string }, channel?: string): Promise<RecordedRow[]> {
  const start = new Date(`${range.from}T00:00:00.000Z`);
  const end = new Date(new Date(`${range.to}T00:00:00.000Z`).getTime() + DAY_MS);
  const db = await getDb();
  const rows = await db.$queryRaw<
    { day: string; channel: string; model: string | null; requests: bigint; prompt: bigint; read: bigint; write: bigint; output: bigint; cost: string }[]
  >`
    SELECT to_char("createdAt", 'YYYY-MM-DD') AS day, channel, "modelServed" AS model, COUNT(*)::bigint AS requests,
      COALESCE(SUM("promptTokens"), 0)::bigint AS prompt, COALESCE(SUM("cacheReadTokens"), 0)::bigint AS read,
      COALESCE(SUM("cacheWriteTokens"), 0)::bigint AS write, COALESCE(SUM("completionTokens"), 0)::bigint AS output,
      COALESCE(SUM("costUsd"), 0)::text AS cost
    FROM "RequestLog"
    WHERE "createdAt" >= ${start} AND "createdAt" < ${end} AND channel IS NOT NULL AND (${channel ?? null}::text IS NULL OR channel = ${channel ?? null})
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
  const protocols = new Map(getConfig().channels.map((c) => [c.name, c.protocol as string]));
  return rows.map((r) => ({
    day: r.day,
    channel: r.channel,
    protocol: protocols.get(r.channel) ?? '',
    model: r.model ?? '',
    requests: Number(r.requests),
    uncachedInput: Number(r.prompt),
    cacheRead: Number(r.read),
    cacheWrite: Number(r.write),
    output: Number(r.output),
    costPico: usdToPico(r.cost.includes('.') ? trimScale(r.cost) : r.cost),
  }));
}

/** A numeric's text at most 12 decimals (pico). */
function trimScale(text: string): string {
  const [whole, frac] = text.split('.');
  return `${whole}.${frac.slice(0, 12)}`;
}

export const recordedCsvHeader = [
  'day',
  'channel',
  'protocol',
  'model',
  'requests',
  'uncached_input_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'output_tokens',
  'cost_usd',
] as const;

export function recordedCsv(rows: RecordedRow[]): string {
  return [
    csvRow(recordedCsvHeader),
    ...rows.map((r) =>
      csvRow([r.day, r.channel, r.protocol, r.model, r.requests, r.uncachedInput, r.cacheRead, r.cacheWrite, r.output, formatPico(r.costPico)]),
    ),
  ].join('');
}

export function recordedJson(r: RecordedRow) {
  return {
    day: r.day,
    channel: r.channel,
    protocol: r.protocol,
    model: r.model,
    requests: r.requests,
    uncached_input_tokens: r.uncachedInput,
    cache_read_tokens: r.cacheRead,
    cache_write_tokens: r.cacheWrite,
    output_tokens: r.output,
    cost_usd: formatPico(r.costPico),
  };
}

// ---- provider exports

/**
 * RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF). Hand-written: the gateway has no CSV
 * reader among its dependencies, and this is the whole of what an export needs.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a BOM (spreadsheet exports)
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      field = '';
      if (row.some((f) => f !== '')) rows.push(row);
      row = [];
    } else field += c;
  }
  row.push(field);
  if (row.some((f) => f !== '')) rows.push(row);
  return rows;
}

export type ExportFormat = 'openai' | 'anthropic';

export interface ProviderRow extends TokenClasses {
  day: string;
  model: string;
}

/**
 * The columns each format is known by. OpenAI: the usage API's completions buckets as its export
 * writes them (`start_time` unix seconds or `start_time_iso`, `model`, `input_tokens` including
 * `input_cached_tokens`, `output_tokens`). Anthropic: the messages usage report (`starting_at`,
 * `model`, `uncached_input_tokens`, `cache_read_input_tokens`, `cache_creation_5m_input_tokens`,
 * `cache_creation_1h_input_tokens`, `output_tokens`), or the console's export names
 * (`usage_date_utc`, `model_version`, `usage_input_tokens_no_cache`, `usage_input_tokens_cache_read`,
 * `usage_input_tokens_cache_write_5m`/`_1h`, `usage_output_tokens`).
 */
const ANTHROPIC_UNCACHED = ['uncached_input_tokens', 'usage_input_tokens_no_cache'];
const OPENAI_INPUT = ['input_tokens', 'n_context_tokens_total'];

function detect(header: string[]): ExportFormat | null {
  if (ANTHROPIC_UNCACHED.some((c) => header.includes(c))) return 'anthropic';
  if (OPENAI_INPUT.some((c) => header.includes(c))) return 'openai';
  return null;
}

/** A provider's usage export, summed per UTC day and model. Errors name the line and column. */
export function parseProviderExport(text: string): { format: ExportFormat; rows: ProviderRow[] } {
  if (Buffer.byteLength(text) > MAX_EXPORT_BYTES) {
    throw codedError('invalid_request', 'reconcile.too_large', { max: MAX_EXPORT_BYTES }, { param: 'csv' });
  }
  const table = parseCsv(text);
  if (table.length === 0) throw codedError('invalid_request', 'reconcile.empty', {}, { param: 'csv' });
  const header = table[0].map((h) => h.trim().toLowerCase());
  const format = detect(header);
  if (!format) {
    throw codedError('invalid_request', 'reconcile.format', {}, { param: 'csv' });
  }
  const col = (...names: string[]) => names.map((n) => header.indexOf(n)).find((i) => i >= 0) ?? -1;
  const need = (label: string, ...names: string[]) => {
    const i = col(...names);
    if (i < 0) throw codedError('invalid_request', 'reconcile.column', { column: label }, { param: 'csv' });
    return i;
  };
  const dayCol = need(format === 'openai' ? 'start_time' : 'starting_at', 'start_time_iso', 'start_time', 'starting_at', 'usage_date_utc', 'date', 'day');
  const modelCol = need('model', 'model', 'model_version', 'snapshot_id');
  const openai = format === 'openai';
  const cols = {
    input: openai ? need('input_tokens', ...OPENAI_INPUT) : -1,
    cached: openai ? col('input_cached_tokens', 'n_context_tokens_cached') : -1,
    uncached: openai ? -1 : need('uncached_input_tokens', ...ANTHROPIC_UNCACHED),
    read: openai ? -1 : col('cache_read_input_tokens', 'usage_input_tokens_cache_read'),
    write5m: openai ? -1 : col('cache_creation_5m_input_tokens', 'usage_input_tokens_cache_write_5m', 'cache_creation_input_tokens'),
    write1h: openai ? -1 : col('cache_creation_1h_input_tokens', 'usage_input_tokens_cache_write_1h'),
    output: need('output_tokens', 'output_tokens', 'usage_output_tokens', 'n_generated_tokens_total'),
  };
  const sums = new Map<string, ProviderRow>();
  table.slice(1).forEach((cells, n) => {
    const line = n + 2;
    const num = (i: number, label: string) => {
      if (i < 0) return 0;
      const v = (cells[i] ?? '').trim();
      if (v === '') return 0;
      const x = Number(v);
      if (!Number.isFinite(x) || x < 0) {
        throw codedError('invalid_request', 'reconcile.number', { line, column: label }, { param: 'csv' });
      }
      return Math.round(x);
    };
    const day = dayOf((cells[dayCol] ?? '').trim());
    if (!day) throw codedError('invalid_request', 'reconcile.day', { line }, { param: 'csv' });
    const model = (cells[modelCol] ?? '').trim();
    let classes: TokenClasses;
    if (openai) {
      const input = num(cols.input, 'input_tokens');
      const cached = Math.min(input, num(cols.cached, 'input_cached_tokens'));
      classes = { uncachedInput: input - cached, cacheRead: cached, cacheWrite: 0, output: num(cols.output, 'output_tokens') };
    } else {
      classes = {
        uncachedInput: num(cols.uncached, 'uncached_input_tokens'),
        cacheRead: num(cols.read, 'cache_read_input_tokens'),
        cacheWrite: num(cols.write5m, 'cache_creation_5m_input_tokens') + num(cols.write1h, 'cache_creation_1h_input_tokens'),
        output: num(cols.output, 'output_tokens'),
      };
    }
    const key = `${day}\0${model}`;
    const row = sums.get(key) ?? { day, model, uncachedInput: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
    row.uncachedInput += classes.uncachedInput;
    row.cacheRead += classes.cacheRead;
    row.cacheWrite += classes.cacheWrite;
    row.output += classes.output;
    sums.set(key, row);
  });
  return { format, rows: [...sums.values()] };
}

/** A UTC day from an ISO date or timestamp, or unix seconds. */
function dayOf(v: string): string | null {
  if (/^\d{9,11}$/.test(v)) return new Date(Number(v) * 1000).toISOString().slice(0, 10);
  if (/^\d{4}-\d{2}-\d{2}/.test(v)) {
    const d = new Date(v.length === 10 ? `${v}T00:00:00Z` : v);
    return Number.isNaN(d.getTime()) ? null : d.toISOString().slice(0, 10);
  }
  return null;
}

export interface DiffRow {
  day: string;
  model: string;
  recorded: TokenClasses;
  provider: TokenClasses;
  /** Provider minus recorded, per class. */
  difference: TokenClasses;
  /** What we billed for these requests. */
  costPico: bigint;
  matches: boolean;
}

const ZERO: TokenClasses = { uncachedInput: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
const CLASSES = ['uncachedInput', 'cacheRead', 'cacheWrite', 'output'] as const;

/** A dated snapshot name ("gpt-4o-mini-2024-07-18", "claude-sonnet-4-5-20250929") as the catalogue's name, when it is one. */
function catalogueName(model: string, known: Set<string>): string {
  if (known.has(model)) return model;
  const base = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');
  return known.has(base) ? base : model;
}

/**
 * Provider rows against what the channels of its protocol (or the one channel named) recorded, per
 * day and model, over the days the export covers.
 */
export async function reconcileExport(text: string, channel?: string) {
  const { format, rows } = parseProviderExport(text);
  const cfg = getConfig();
  if (channel && !cfg.channels.some((c) => c.name === channel)) {
    throw codedError('invalid_request', 'reconcile.channel', { channel }, { param: 'channel' });
  }
  const days = rows.map((r) => r.day).sort();
  const range = days.length ? { from: days[0], to: days.at(-1)! } : reconcileRange(null, null);
  const recorded = (await recordedUsage(range, channel)).filter((r) => channel || r.protocol === format);
  const known = new Set(recorded.map((r) => r.model));
  const diffs = new Map<string, DiffRow>();
  const entry = (day: string, model: string) => {
    const key = `${day}\0${model}`;
    let d = diffs.get(key);
    if (!d) diffs.set(key, (d = { day, model, recorded: { ...ZERO }, provider: { ...ZERO }, difference: { ...ZERO }, costPico: 0n, matches: true }));
    return d;
  };
  for (const r of recorded) {
    const d = entry(r.day, r.model);
    for (const c of CLASSES) d.recorded[c] += r[c];
    d.costPico += r.costPico;
  }
  for (const r of rows) {
    const d = entry(r.day, catalogueName(r.model, known));
    for (const c of CLASSES) d.provider[c] += r[c];
  }
  const list = [...diffs.values()].sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model));
  for (const d of list) {
    for (const c of CLASSES) d.difference[c] = d.provider[c] - d.recorded[c];
    d.matches = CLASSES.every((c) => d.difference[c] === 0);
  }
  return { format, channel: channel ?? null, from: range.from, to: range.to, rows: list };
}

const classesJson = (t: TokenClasses) => ({
  uncached_input_tokens: t.uncachedInput,
  cache_read_tokens: t.cacheRead,
  cache_write_tokens: t.cacheWrite,
  output_tokens: t.output,
});

export function reconcileJson(r: Awaited<ReturnType<typeof reconcileExport>>) {
  return {
    format: r.format,
    channel: r.channel,
    from: r.from,
    to: r.to,
    differing: r.rows.filter((d) => !d.matches).length,
    rows: r.rows.map((d) => ({
      day: d.day,
      model: d.model,
      matches: d.matches,
      recorded: classesJson(d.recorded),
      provider: classesJson(d.provider),
      difference: classesJson(d.difference),
      recorded_cost_usd: formatPico(d.costPico),
    })),
  };
}
