import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { env } from '@/lib/env';

// The one place a Redis client is made from the configuration: a single Redis (REDIS_URL) or a
// Redis Cluster (REDIS_CLUSTER_NODES). Callers use commands both answer alike; multi-key commands
// and scripts keep their keys in one hash tag (lib/limits/keys.ts).

export type RedisClient = Redis | Cluster;

/** True when the gateway shares its state through Redis (single or cluster). */
export function redisConfigured(): boolean {
  return env.REDIS_CLUSTER_NODES.length > 0 || env.REDIS_URL !== undefined;
}

/**
 * A new client with these connection options (per node on a cluster), or undefined without Redis.
 * On a cluster, `enableOfflineQueue` applies to the cluster client too (a failing-fast client stays
 * failing fast while the cluster is reconnecting or refreshing its slots after a failover).
 */
export function newRedisClient(options: RedisOptions = {}): RedisClient | undefined {
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
