// Entry point of the limiter module: picks the implementation from the configuration.

import { FailoverLimiter } from './failover-limiter';
import { MemoryLimiter } from './memory-limiter';
import { RedisLimiter } from './redis-limiter';
import type { Limiter } from './types';

export * from './types';
export { MemoryLimiter, type MemoryLimiterOptions } from './memory-limiter';
export { RedisLimiter } from './redis-limiter';
export { FailoverLimiter, FAILOVER_REDIS_OPTIONS, type FailoverLimiterOptions, type LimiterLogEntry } from './failover-limiter';

export interface LimiterMetrics {
  backend: 'redis' | 'memory';
  /** Calls answered in-process because Redis was unavailable. */
  fallbackCount: number;
}

/** The limiter most recently built by createLimiter (what /metrics reports on). */
let current: Limiter | undefined;

/**
 * With a Redis URL (or Redis Cluster nodes): Redis shared by all instances, falling back to in-process limits while
 * Redis is unreachable. Without: in-process limits only (a single instance).
 */
export function createLimiter(redisUrl?: string, clusterNodes: { host: string; port: number }[] = []): Limiter {
  if (clusterNodes.length > 0) current = FailoverLimiter.fromClusterNodes(clusterNodes);
  else current = redisUrl ? FailoverLimiter.fromUrl(redisUrl) : new MemoryLimiter();
  return current;
}

export function limiterMetrics(limiter: Limiter | undefined = current): LimiterMetrics {
  if (limiter instanceof FailoverLimiter) {
    return { backend: limiter.backend, fallbackCount: limiter.fallbackCount };
  }
  return { backend: limiter instanceof RedisLimiter ? 'redis' : 'memory', fallbackCount: 0 };
}
