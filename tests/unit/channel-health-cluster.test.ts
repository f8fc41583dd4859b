// The shared store of channel health (lib/channels/health.ts RedisStore) as two instances use it, on
// a single Redis and on a Redis Cluster (its keys share one hash tag: one pipeline per tick works on
// both): counts from both instances add up in one window, a state change is written by exactly one
// of two instances computing it, a probe is claimed by one.
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelInfo } from '@/lib/config';
import { RedisStore } from '@/lib/channels/health';
import { bucketOf, DEFAULT_THRESHOLDS, INITIAL_HEALTH, windowCounts, type Counts } from '@/lib/channels/health-machine';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster';

let cluster: TestCluster;
const clients: (Redis | Cluster)[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await cluster?.stop();
});

const channel = (name: string): ChannelInfo => ({
  name,
  protocol: 'openai',
  baseUrl: 'http://127.0.0.1:1',
  apiKey: 'k',
  models: ['m'],
  priority: 0,
  weight: 1,
  timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000 },
});

const kinds = {
  'single Redis': () => new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 }),
  'Redis Cluster': () => new Cluster(cluster.nodes, { redisOptions: { commandTimeout: 2_000 } }),
};

describe.each(Object.entries(kinds))('channel health shared through %s', (_kind, connect) => {
  const instance = () => {
    const c = connect();
    clients.push(c);
    return new RedisStore(c);
  };

  it('two instances add up to one window; one of two computing the same change writes it; one claims a probe', async () => {
    const [a, b] = [instance(), instance()];
    const ch = channel(`cl-${randomUUID().slice(0, 8)}`);
    const now = Date.now();
    const bucket = bucketOf(now, DEFAULT_THRESHOLDS);
    const pending = (c: Counts) => new Map([[ch.name, new Map([[bucket, c]])]]);
    const sample = { at: now, status: 500, error: 'upstream answered 500', counted: true };
    await a.sync(pending({ ok: 2, fail: 1, latencyMs: 80 }), new Map([[ch.name, [sample]]]), [ch]);
    const view = await b.sync(pending({ ok: 0, fail: 3, latencyMs: 0 }), new Map(), [ch]);
    expect(windowCounts(view.windows.get(ch.name)!, now, DEFAULT_THRESHOLDS, 0)).toEqual({ ok: 2, fail: 4, latencyMs: 80 });
    expect(view.samples.get(ch.name)).toEqual([sample]);
    expect(view.states.get(ch.name)).toBeUndefined();

    const next = { ...INITIAL_HEALTH, state: 'failed' as const, since: now, v: 1 };
    const wins = await Promise.all([a.cas(ch.name, 0, next), b.cas(ch.name, 0, { ...next, since: now + 1 })]);
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await a.current(ch.name)).state).toBe('failed');
    expect((await b.sync(new Map(), new Map(), [ch])).states.get(ch.name)).toMatchObject({ state: 'failed', v: 1 });
    // A change computed from a stale version is refused.
    expect(await b.cas(ch.name, 0, { ...next, state: 'degraded' })).toBe(false);

    const key = `gw:{chh}:probe:${ch.name}`;
    const claims = await Promise.all([a.claim(key, 5000), b.claim(key, 5000)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
  });
});
