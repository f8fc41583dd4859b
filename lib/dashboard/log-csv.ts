import { formatPico } from '@/lib/money';
import { usageClasses, type StoredBreakdown } from '@/lib/pricing/breakdown';
import { GatewayError } from '@/lib/errors';
import type { CsvValue } from './csv';
import type { LogEntry } from './log-entry';

// Columns of the request-log CSV export. Money is exact (not rounded); times are ISO 8601 UTC.
// The price breakdown (docs/decisions/043) follows as fixed columns an accountant can sum: the cost
// of each token class, of per-use tools, and the signed adjustments (multiplier, discounts, cap),
// which add up to cost_usd on every row. Empty where the row has no breakdown (logged before it was
// recorded, or nothing was priced).

/** Token classes with a cost column of their own; per-use classes (web search, code execution) go to `tools_cost_usd`. */
const PER_USE = new Set<string>(['web_search', 'code_execution']);
const TOKEN_CLASSES = usageClasses.filter((c) => !PER_USE.has(c));

export const breakdownCsvHeader = [
  'price_tier',
  ...TOKEN_CLASSES.map((c) => `${c}_cost_usd` as const),
  'tools_cost_usd',
  'adjustments_usd',
  'adjustments',
  'unpriced_classes',
] as const;

/** Pico-USD per cost column of a breakdown (the columns that are money). */
function breakdownAmounts(b: StoredBreakdown): Map<string, bigint> {
  const m = new Map<string, bigint>([...TOKEN_CLASSES.map((c) => [`${c}_cost_usd`, 0n] as const), ['tools_cost_usd', 0n], ['adjustments_usd', 0n]]);
  const add = (col: string, v: string) => m.set(col, (m.get(col) ?? 0n) + BigInt(v));
  for (const [cls, , , cost] of b.l) add(PER_USE.has(cls) ? 'tools_cost_usd' : `${cls}_cost_usd`, cost);
  for (const [, , , cost] of b.k ?? []) add('tools_cost_usd', cost);
  for (const [, , amount] of b.a ?? []) add('adjustments_usd', amount);
  return m;
}

function breakdownCsvValues(b: StoredBreakdown | null | undefined): CsvValue[] {
  if (!b) return breakdownCsvHeader.map(() => undefined);
  const amounts = breakdownAmounts(b);
  return breakdownCsvHeader.map((col) => {
    if (col === 'price_tier') return b.t;
    if (col === 'adjustments')
      return (b.a ?? []).map(([kind, detail, amount]) => `${kind}${detail ? ` ${detail}` : ''}: ${formatPico(BigInt(amount))}`).join('; ');
    if (col === 'unpriced_classes') return (b.u ?? []).join(' ');
    return formatPico(amounts.get(col) ?? 0n);
  });
}

export const logCsvHeader = [
  'id',
  'created_at',
  'endpoint',
  'api_key_id',
  'api_key_name',
  'model_requested',
  'model_served',
  'channel',
  'status',
  'outcome',
  'error_code',
  'stream',
  'prompt_tokens',
  'completion_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'tokens_estimated',
  'cost_usd',
  'cost_cny',
  'cny_rate',
  'latency_ms',
  'first_token_ms',
  'route_reason',
  'billed_to',
  ...breakdownCsvHeader,
  // Last, so that the columns before keep their places (docs/decisions/056).
  'member_id',
  'member',
  'project_id',
  'project',
] as const;

/** Who the ids of the member and project columns are: emails and project names by id. */
export interface LogGroupNames {
  members: ReadonlyMap<string, string>;
  projects: ReadonlyMap<string, string>;
}

export function logCsvValues(e: LogEntry, keyName: string | undefined, names?: LogGroupNames): CsvValue[] {
  return [
    e.id,
    e.createdAt.toISOString(),
    e.endpoint,
    e.apiKeyId,
    keyName,
    e.modelRequested,
    e.modelServed,
    e.channel,
    e.status,
    e.outcome,
    e.errorCode,
    e.stream,
    e.promptTokens,
    e.completionTokens,
    e.cacheReadTokens,
    e.cacheWriteTokens,
    e.tokensEstimated,
    formatPico(e.costUsd),
    formatPico(e.costCny),
    e.cnyRate,
    e.latencyMs,
    e.firstTokenMs,
    e.routeReason,
    e.billedTo === 'plan' ? 'plan' : 'balance',
    ...breakdownCsvValues(e.priceBreakdown),
    e.memberId ?? undefined,
    e.memberId ? names?.members.get(e.memberId) : undefined,
    e.projectId ?? undefined,
    e.projectId ? (names?.projects.get(e.projectId) ?? 'deleted project') : undefined,
  ];
}

// JSONL: one object per request with the CSV's columns as members (numbers as numbers, money as exact
// decimal text), then one `{"type":"totals",…}` line. Both formats end with the totals of the rows
// they hold, so a download cut short is recognisable by its missing last line.

export type LogExportFormat = 'csv' | 'jsonl';

export function parseExportFormat(value: string | null): LogExportFormat {
  const v = (value ?? 'csv').trim().toLowerCase();
  if (v === 'csv' || v === '') return 'csv';
  if (v === 'jsonl' || v === 'ndjson') return 'jsonl';
  throw new GatewayError('invalid_request', 'format must be csv or jsonl.', { param: 'format' });
}

export class LogTotals {
  requests = 0;
  promptTokens = 0;
  completionTokens = 0;
  cacheReadTokens = 0;
  cacheWriteTokens = 0;
  costUsd = 0n;
  costCny = 0n;
  /** Sums of the breakdown's money columns. */
  breakdown = new Map<string, bigint>();
  add(e: LogEntry): void {
    if (e.priceBreakdown) for (const [col, v] of breakdownAmounts(e.priceBreakdown)) this.breakdown.set(col, (this.breakdown.get(col) ?? 0n) + v);
    this.requests++;
    this.promptTokens += e.promptTokens;
    this.completionTokens += e.completionTokens;
    this.cacheReadTokens += e.cacheReadTokens;
    this.cacheWriteTokens += e.cacheWriteTokens;
    this.costUsd += e.costUsd;
    this.costCny += e.costCny;
  }
}

/** The totals' sums by the name of their column, in both formats (money as exact decimal text). */
function totalSums(t: LogTotals) {
  return {
    prompt_tokens: t.promptTokens,
    completion_tokens: t.completionTokens,
    cache_read_tokens: t.cacheReadTokens,
    cache_write_tokens: t.cacheWriteTokens,
    cost_usd: formatPico(t.costUsd),
    cost_cny: formatPico(t.costCny),
  } satisfies Partial<Record<(typeof logCsvHeader)[number], CsvValue>>;
}

/** The CSV's last row: `total` and the request count in the first columns, the sums under their columns. */
export function logTotalsCsvValues(t: LogTotals): CsvValue[] {
  const byColumn: Partial<Record<(typeof logCsvHeader)[number], CsvValue>> = { id: 'total', created_at: `${t.requests} requests`, ...totalSums(t) };
  for (const [col, v] of t.breakdown) byColumn[col as (typeof logCsvHeader)[number]] = formatPico(v);
  return logCsvHeader.map((c) => byColumn[c]);
}

export function logJsonLine(e: LogEntry, keyName: string | undefined, extra: Record<string, unknown> = {}, names?: LogGroupNames): string {
  const values = logCsvValues(e, keyName, names);
  const obj: Record<string, unknown> = { ...extra };
  logCsvHeader.forEach((name, i) => {
    const v = values[i];
    obj[name] = typeof v === 'bigint' ? v.toString() : v === undefined ? null : v;
  });
  return JSON.stringify(obj) + '\n';
}

export function logTotalsJsonLine(t: LogTotals): string {
  return JSON.stringify({ type: 'totals', requests: t.requests, ...totalSums(t) }) + '\n';
}
