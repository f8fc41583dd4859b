// A request-log record as the gateway queues it, for the writer benchmarks.
import { randomBytes } from 'node:crypto';
import type { LogRecord } from '@/lib/billing/writer';

export function record(userId: string): LogRecord {
  return {
    id: `req_${randomBytes(12).toString('hex')}`,
    createdAt: new Date(),
    userId,
    apiKeyId: null,
    endpoint: '/v1/chat/completions',
    modelRequested: 'gpt-4o-mini',
    modelServed: 'gpt-4o-mini',
    channel: 'openai-1',
    attempts: [{ channel: 'openai-1', model: 'gpt-4o-mini', ok: true, status: 200, ms: 1 }],
    status: 200,
    outcome: 'ok',
    stream: false,
    promptTokens: 12,
    completionTokens: 7,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    tokensEstimated: false,
    costPico: 6_000_000n,
    costCnyPico: 43_200_000n,
    cnyRate: '7.2',
    latencyMs: 1,
    firstTokenMs: 1,
    errorCode: null,
    routeReason: null,
  };
}
