// Runs before each test file. Every gateway a test starts sees its clients at 127.0.0.1, and the
// sign-in throttle's per-address budget (lib/auth/login-throttle.ts: 50 failures in 15 minutes across
// accounts) lives in the run's Redis database: the wrong passwords earlier files try on purpose would
// otherwise use up a later file's budget. Each file starts with none counted, as a real address would.
import { Redis } from 'ioredis';
import { beforeAll } from 'vitest';

beforeAll(async () => {
  const url = process.env.REDIS_URL;
  if (!url) return;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'gw:login:*', 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } catch {
    // No Redis: the gateways count in-process, per process.
  } finally {
    redis.disconnect();
  }
});
