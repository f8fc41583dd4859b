import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { METRICS_CONTENT_TYPE, renderMetrics, type Gauge } from '@/lib/metrics';
import { limiterMetrics } from '@/lib/limits';
import { queuedLogCount } from '@/lib/billing/writer';
import { sameHash } from '@/lib/keys/api-key';
import { createHash } from 'node:crypto';
import { upstreamPoolStats } from '@/lib/gateway/upstream';

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

/**
 * Process and connection gauges, computed only when /metrics is scraped (nothing on the hot path).
 * `nodejs_active_*` count what keeps the event loop alive (process.getActiveResourcesInfo(): ref'd
 * sockets, servers, timers, pending fs/dns requests); unref'd keep-alive sockets to the upstreams are
 * counted per channel from the connection pools instead.
 */
export function processGauges(): Record<string, Gauge> {
  const mem = process.memoryUsage();
  const resources = process.getActiveResourcesInfo();
  const byType = new Map<string, number>();
  for (const type of resources) byType.set(type, (byType.get(type) ?? 0) + 1);
  const sockets = upstreamPoolStats();
  return {
    process_resident_memory_bytes: mem.rss,
    nodejs_heap_used_bytes: mem.heapUsed,
    nodejs_heap_total_bytes: mem.heapTotal,
    nodejs_external_memory_bytes: mem.external,
    nodejs_active_handles: resources.length,
    nodejs_active_resources: [...byType].sort(([a], [b]) => a.localeCompare(b)).map(([type, value]) => ({ labels: { type }, value })),
    gateway_upstream_sockets: [...sockets].map(([channel, s]) => ({ labels: { channel }, value: s.connected })),
    gateway_upstream_requests_in_flight: [...sockets].map(([channel, s]) => ({ labels: { channel }, value: s.busy })),
  };
}

/**
 * GET /metrics, only with `Authorization: Bearer $METRICS_TOKEN` (404 when no token is configured).
 * `gc`: run a full garbage collection first, so heap figures compare across scrapes (leak tests);
 * honoured only with METRICS_ALLOW_GC=1 and node started with --expose-gc.
 */
export async function metrics(authorization: string | undefined, opts: { gc?: boolean; extra?: Record<string, Gauge> } = {}): Promise<OpsResponse> {
  if (!env.METRICS_TOKEN) return jsonResponse(404, { error: { code: 'not_found', message: 'Metrics are disabled: set METRICS_TOKEN.' } });
  const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1] ?? '';
  if (!sameHash(digest(given), digest(env.METRICS_TOKEN))) return jsonResponse(401, { error: { code: 'unauthenticated', message: 'Bad metrics token.' } });
  const gc = (globalThis as { gc?: () => void }).gc;
  const collected = Boolean(opts.gc && env.METRICS_ALLOW_GC && typeof gc === 'function');
  if (collected) gc!();
  const limiter = limiterMetrics();
  return {
    status: 200,
    contentType: METRICS_CONTENT_TYPE,
    body: await renderMetrics({
      gateway_limiter_backend_redis: limiter.backend === 'redis' ? 1 : 0,
      gateway_limiter_fallback_total: limiter.fallbackCount,
      gateway_log_queue_length: queuedLogCount(),
      ...opts.extra,
      ...processGauges(),
      nodejs_gc_before_scrape: collected ? 1 : 0,
    }),
  };
}
