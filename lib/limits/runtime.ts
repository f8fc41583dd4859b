import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';
import { createLimiter } from './index';
import type { Limiter } from './types';

/** The limiter of this process: Redis-backed (with in-process fallback) when REDIS_URL is set. */
export function getLimiter(): Limiter {
  return singleton('limiter', () => createLimiter(env.REDIS_URL, env.REDIS_CLUSTER_NODES));
}
