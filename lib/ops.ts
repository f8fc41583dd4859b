import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { renderMetrics } from '@/lib/metrics';
import { limiterMetrics } from '@/lib/limits';
import { queuedLogCount } from '@/lib/billing/writer';
import { sameHash } from '@/lib/auth/keys';
import { createHash } from 'node:crypto';

// Health, readiness and Prometheus metrics, shared by the custom server and the route handlers.
export interface OpsResponse {
  status: number;
  contentType: string;
  body: string;
}

const jsonResponse = (status: number, body: unknown): OpsResponse => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

export function healthz(): OpsResponse {
  return jsonResponse(200, { status: 'ok' });
}

export async function readyz(): Promise<OpsResponse> {
  try {
    const db = await getDb();
    await Promise.race([db.$queryRaw`SELECT 1`, new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
    return jsonResponse(200, { status: 'ready', database: 'ok', limiter: limiterMetrics().backend });
  } catch {
    return jsonResponse(503, { status: 'not ready', database: 'unreachable', limiter: limiterMetrics().backend });
  }
}

const digest = (s: string) => createHash('sha256').update(s).digest('hex');

/** GET /metrics, only with `Authorization: Bearer $METRICS_TOKEN` (404 when no token is configured). */
export function metrics(authorization: string | undefined): OpsResponse {
  if (!env.METRICS_TOKEN) return jsonResponse(404, { error: { code: 'not_found', message: 'Metrics are disabled: set METRICS_TOKEN.' } });
  const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1] ?? '';
  if (!sameHash(digest(given), digest(env.METRICS_TOKEN))) return jsonResponse(401, { error: { code: 'unauthenticated', message: 'Bad metrics token.' } });
  const limiter = limiterMetrics();
  return {
    status: 200,
    contentType: 'text/plain; version=0.0.4',
    body: renderMetrics({
      gateway_limiter_backend_redis: limiter.backend === 'redis' ? 1 : 0,
      gateway_limiter_fallback_total: limiter.fallbackCount,
      gateway_log_queue_length: queuedLogCount(),
      process_resident_memory_bytes: process.memoryUsage().rss,
    }),
  };
}
