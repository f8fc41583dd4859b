import { formatPico } from '@/lib/billing/money';
import type { CsvValue } from './csv';
import type { LogEntry } from './log-entry';

// Columns of the request-log CSV export. Money is exact (not rounded); times are ISO 8601 UTC.

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
] as const;

export function logCsvValues(e: LogEntry, keyName: string | undefined): CsvValue[] {
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
  ];
}
