import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';
import { createLimiter } from '@/lib/limits';
import { accountKey } from '@/lib/limits/keys';
import type { Limiter } from '@/lib/limits/types';

/** The limiter of this process: Redis-backed (with in-process fallback) when REDIS_URL is set. */
export function getLimiter(): Limiter {
  return singleton('limiter', () => createLimiter(env.REDIS_URL, env.REDIS_CLUSTER_NODES));
}

/** Limiter key holding an account's spendable balance in pico-USD. */
export const balanceKey = (userId: string) => accountKey(userId, 'bal');
