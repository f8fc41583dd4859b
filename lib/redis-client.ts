import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { env } from '@/lib/env';
import { errorFields, log } from '@/lib/log';

// The one place a Redis client is made from the configuration: a single Redis (REDIS_URL) or a
// Redis Cluster (REDIS_CLUSTER_NODES). Callers use commands both answer alike; multi-key commands
// and scripts keep their keys in one hash tag (lib/limits/keys.ts).

export type RedisClient = Redis | Cluster;

/** True when the gateway shares its state through Redis (single or cluster). */
export function redisConfigured(): boolean {
  return env.REDIS_CLUSTER_NODES.length > 0 || env.REDIS_URL !== undefined;
}

/** Time between two logged errors of one client: a Redis outage makes one per reconnect attempt. */
const ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * Logs a client's errors as JSON lines (lib/log.ts), at most one per ERROR_LOG_INTERVAL_MS with the
 * count of those left out. Without an 'error' listener ioredis prints each one with its stack to
 * stderr, which breaks a JSON log while Redis is down.
 */
export function logRedisErrors(client: RedisClient, role: string): void {
  let last = -Infinity;
  let suppressed = 0;
  const onError = (err: unknown) => {
    const now = Date.now();
    if (now - last < ERROR_LOG_INTERVAL_MS) {
      suppressed++;
      return;
    }
    last = now;
    const { error } = errorFields(err);
    log('warn', 'redis client error', { role, error, ...(suppressed > 0 ? { suppressed } : {}) });
    suppressed = 0;
  };
  client.on('error', onError);
  // A cluster's node connections report here; the cluster's own 'error' covers the rest.
  if (client instanceof Cluster) client.on('node error', onError);
}

/**
 * A new client with these connection options (per node on a cluster), or undefined without Redis,
 * its errors logged under `role` (logRedisErrors).
 * On a cluster, `enableOfflineQueue` applies to the cluster client too (a failing-fast client stays
 * failing fast while the cluster is reconnecting or refreshing its slots after a failover).
 */
export function newRedisClient(role: string, options: RedisOptions = {}): RedisClient | undefined {
  const client = makeClient(options);
  if (client) logRedisErrors(client, role);
  return client;
}

function makeClient(options: RedisOptions): RedisClient | undefined {
  if (env.REDIS_CLUSTER_NODES.length > 0) {
    return new Cluster(env.REDIS_CLUSTER_NODES, {
      redisOptions: options,
      enableOfflineQueue: options.enableOfflineQueue ?? true,
      clusterRetryStrategy: () => 500,
      // A failed-over primary's slots move to its replica within a few seconds: retry MOVED/CLUSTERDOWN briefly.
      retryDelayOnClusterDown: 100,
      retryDelayOnFailover: 100,
      maxRedirections: 16,
      slotsRefreshTimeout: 1_000,
      // Topology changes that no failed call reveals (a resharding, a failover of an idle slot).
      slotsRefreshInterval: 5_000,
    });
  }
  return env.REDIS_URL ? new Redis(env.REDIS_URL, options) : undefined;
}
