import { errorFields, log } from '@/lib/log';
import { newRedisClient, redisConfigured, type RedisClient } from '@/lib/redis-client';
import { singleton } from '@/lib/singleton';

// The store of the response cache and of conversation affinity: Redis when the gateway has one
// (shared by every instance, entries expired by Redis), else a bounded in-process map (the embedded
// single-instance default). A store that cannot answer is a miss: a cache never fails a request.

export interface CacheStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

/**
 * A size-bounded map with per-entry expiry, least recently used first out. Hand-written rather
 * than lru-cache (only a transitive dependency here): a Map's insertion order is the LRU order,
 * which is all this needs.
 */
export class MemoryStore implements CacheStore {
  private readonly entries = new Map<string, { value: string; expiresAt: number; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes: () => number) {}

  get(key: string): Promise<string | null> {
    const e = this.entries.get(key);
    if (!e) return Promise.resolve(null);
    this.entries.delete(key);
    if (e.expiresAt <= Date.now()) {
      this.bytes -= e.bytes;
      return Promise.resolve(null);
    }
    this.entries.set(key, e); // most recently used: last out
    return Promise.resolve(e.value);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    const bytes = key.length + value.length * 2;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    const max = this.maxBytes();
    if (bytes > max) return Promise.resolve();
    while (this.bytes + bytes > max) {
      const [oldest, e] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      this.bytes -= e.bytes;
    }
    this.entries.set(key, { value, expiresAt: Date.now() + ttlMs, bytes });
    this.bytes += bytes;
    return Promise.resolve();
  }
}

class RedisStore implements CacheStore {
  constructor(
    private readonly client: RedisClient,
    private readonly role: string,
  ) {}

  async get(key: string): Promise<string | null> {
    try {
      return await this.client.get(key);
    } catch (err) {
      log('warn', 'cache store read failed', { role: this.role, ...errorFields(err) });
      return null;
    }
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    try {
      await this.client.set(key, value, 'PX', Math.max(1, Math.round(ttlMs)));
    } catch (err) {
      log('warn', 'cache store write failed', { role: this.role, ...errorFields(err) });
    }
  }
}

/** The store named `role` ('response-cache', 'affinity'): one per process. */
export function cacheStore(role: string, memoryMaxBytes: () => number): CacheStore {
  return singleton(`cache-store:${role}`, () => {
    if (!redisConfigured()) return new MemoryStore(memoryMaxBytes);
    // A slow or absent Redis is a miss after a short wait, never a stalled request.
    const client = newRedisClient(role, { maxRetriesPerRequest: 1, commandTimeout: 500, retryStrategy: () => 500 })!;
    return new RedisStore(client, role);
  });
}
