import { randomUUID } from 'node:crypto';
import type { LogRecord } from '@/lib/billing/writer';

/** A request-log record as the gateway hands it to the batch writer: a 200 chat call for 30 tokens, $0.000001. */
export function logRecord(userId: string, over: Partial<LogRecord> = {}): LogRecord {
  return {
    id: `req_${randomUUID().replace(/-/g, '')}`,
    createdAt: new Date('2026-11-20T10:00:00Z'),
    userId,
    apiKeyId: null,
    endpoint: 'chat',
    modelRequested: 'gpt-4o-mini',
    modelServed: 'gpt-4o-mini',
    channel: 'openai-1',
    attempts: [],
    status: 200,
    outcome: 'ok',
    stream: false,
    promptTokens: 10,
    completionTokens: 20,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    tokensEstimated: false,
    costPico: 1_000_000n,
    costCnyPico: 7_200_000n,
    cnyRate: '7.2',
    latencyMs: 5,
    firstTokenMs: null,
    errorCode: null,
    routeReason: null,
    ...over,
  };
}
