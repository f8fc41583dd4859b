import { randomUUID } from 'node:crypto';
import { codedError } from '@/lib/errors';
import { getLimiter } from './runtime';

/** Sliding-window limit for the account endpoints (per IP or per user), answered as 429. */
export async function enforceLimit(key: string, limit: number, label: string): Promise<void> {
  const result = await getLimiter().admit({
    rules: [{ kind: 'window', key, limit, windowMs: 60_000, label }],
    leaseId: randomUUID(),
    leaseTtlMs: 1,
  });
  if (!result.ok && result.reason === 'limit') {
    throw codedError(
      'rate_limit_exceeded',
      'request.rate_limited',
      { what: label, seconds: Math.ceil(result.retryAfterMs / 1000) },
      { retryAfterMs: result.retryAfterMs },
    );
  }
}
