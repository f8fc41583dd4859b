// Tokens per minute (reserve at admission, settle to what was used, refund) and per-channel
// concurrency, against a REAL Redis and the in-process limiter with identical cases, and with two
// admitters racing for the same limit (two Redis connections; two callers of one in-process limiter).

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryLimiter } from '../../lib/limits/memory-limiter';
import { RedisLimiter } from '../../lib/limits/redis-limiter';
import type { AdmitInput, AdmitResult, ConcurrencyRule, Limiter, Rule, TokenSettlement, TokensRule } from '../../lib/limits/types';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = `test:tpm:${randomUUID()}:`;
const MINUTE = 60_000;

const ns = () => {
  const id = randomUUID();
  return (name: string) => `${RUN}${id}:${name}`;
};
const tpm = (key: string, limit: number): TokensRule => ({ kind: 'tokens', key, limit, windowMs: MINUTE, label: `${limit} tokens per minute` });
const conc = (key: string, limit: number): ConcurrencyRule => ({ kind: 'concurrency', key, limit, label: `${limit} concurrent requests` });

function admit(limiter: Limiter, rules: Rule[], extra: Partial<AdmitInput> = {}): Promise<AdmitResult> {
  return limiter.admit({ rules, leaseId: randomUUID(), leaseTtlMs: 60_000, ...extra });
}

function ok(r: AdmitResult): Extract<AdmitResult, { ok: true }> {
  if (!r.ok) throw new Error(`expected admission, got ${JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
  return r;
}

function refused(r: AdmitResult): Extract<AdmitResult, { reason: 'limit' }> {
  if (r.ok || r.reason !== 'limit') throw new Error(`expected a limit refusal, got ${JSON.stringify(r)}`);
  return r;
}

/** The settlement of an admission's tokens rules: `used` tokens of `reserved`. */
function settlements(r: Extract<AdmitResult, { ok: true }>, reserved: number, used: number): TokenSettlement[] {
  return r.states
    .filter((s) => s.rule.kind === 'tokens')
    .map((s) => ({ key: s.rule.key, windowMs: (s.rule as TokensRule).windowMs, at: s.at!, delta: used - reserved }));
}

const implementations: [string, () => Limiter[]][] = [
  // Two callers of one in-process limiter (one instance, no Redis).
  ['memory', () => { const m = new MemoryLimiter(); return [m, m]; }], // prettier-ignore
  // Two instances on separate connections to one Redis.
  ['redis', () => [new RedisLimiter(REDIS_URL), new RedisLimiter(REDIS_URL)]],
];

describe.each(implementations)('%s limiter: tokens per minute and channel concurrency', (_name, make) => {
  let a: Limiter;
  let b: Limiter;
  beforeAll(() => {
    [a, b] = make();
  });
  afterAll(async () => {
    await a.close();
    if (b !== a) await b.close();
  });

  it('reserves at admission: refuses the request that would cross the limit, with the wait until it fits', async () => {
    const k = ns();
    const rule = tpm(k('tpm'), 10_000);
    const first = ok(await admit(a, [rule], { tokens: 6_000 }));
    expect(first.states[0].remaining).toBe(4_000);
    expect(first.states[0].at).toBeGreaterThan(Date.now() - 60_000);
    const r = refused(await admit(b, [rule], { tokens: 4_001 }));
    expect(r.rule).toBe(rule);
    expect(r.retryAfterMs).toBeGreaterThan(55_000);
    expect(r.retryAfterMs).toBeLessThanOrEqual(62_000);
    expect(r.states[0].remaining).toBe(4_000);
    // Exactly what is left still fits.
    ok(await admit(b, [rule], { tokens: 4_000 }));
    refused(await admit(a, [rule], { tokens: 1 }));
  });

  it('settles to what was used: the unused part of the reservation is refunded at once', async () => {
    const k = ns();
    const rule = tpm(k('tpm'), 10_000);
    const r = ok(await admit(a, [rule], { tokens: 9_000 }));
    refused(await admit(b, [rule], { tokens: 2_000 }));
    await a.release({ leaseId: 'x', concurrencyKeys: [], tokens: settlements(r, 9_000, 1_500) });
    const next = ok(await admit(b, [rule], { tokens: 8_500 }));
    expect(next.states[0].remaining).toBe(0);
    // A settlement beyond the reservation counts the excess too (a prompt larger than its estimate).
    await b.release({ leaseId: 'y', concurrencyKeys: [], tokens: settlements(next, 8_500, 8_500) });
    refused(await admit(a, [rule], { tokens: 1 }));
  });

  it('a refund (nothing used: an upstream that failed first) takes the whole reservation back; never below zero', async () => {
    const k = ns();
    const rule = tpm(k('tpm'), 1_000);
    const r = ok(await admit(a, [rule], { tokens: 1_000 }));
    await a.release({ leaseId: 'x', concurrencyKeys: [], tokens: settlements(r, 1_000, 0) });
    // Settled twice (replayed): nothing is taken below zero.
    await a.release({ leaseId: 'x', concurrencyKeys: [], tokens: settlements(r, 1_000, 0) });
    const again = ok(await admit(b, [rule], { tokens: 1_000 }));
    expect(again.states[0].remaining).toBe(0);
  });

  it('a reservation larger than the limit never fits: refused with a wait no retry within the minute can beat', async () => {
    const k = ns();
    const r = refused(await admit(a, [tpm(k('tpm'), 1_000)], { tokens: 1_001 }));
    expect(r.retryAfterMs).toBeGreaterThan(55_000);
  });

  it('two admitters racing: never more tokens reserved than the limit', async () => {
    const k = ns();
    const rule = tpm(k('tpm'), 10_000);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => admit(i % 2 ? a : b, [rule], { tokens: 1_000 })));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
  });

  it('a refused tokens rule mutates nothing else; a refused other rule takes no tokens', async () => {
    const k = ns();
    const t = tpm(k('tpm'), 1_000);
    const c = conc(k('conc'), 1);
    const held = ok(await admit(a, [c], {}));
    refused(await admit(b, [t, c], { tokens: 10 }));
    // The tokens rule took nothing: all 1,000 still fit.
    ok(await admit(b, [t], { tokens: 1_000 }));
    void held;
  });

  it('channel concurrency: two admitters racing for a cap of 2 get exactly 2; a release frees one', async () => {
    const k = ns();
    const channel = conc(k('ch:conc'), 2);
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const results = await Promise.all(ids.map((leaseId, i) => (i % 2 ? a : b).admit({ rules: [channel], leaseId, leaseTtlMs: 60_000 })));
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    const r = refused(results.find((x) => !x.ok)!);
    expect(r.rule.label).toBe('2 concurrent requests');
    const held = ids.filter((_, i) => results[i].ok);
    await a.release({ leaseId: held[0], concurrencyKeys: [channel.key] });
    ok(await admit(b, [channel]));
    refused(await admit(a, [channel]));
  });

  it('usage (the console): live leases and the tokens the window holds, read without changing them, settled and released', async () => {
    const k = ns();
    const channel = conc(k('ch:conc'), 5);
    const rule = tpm(k('ch:tpm'), 10_000);
    expect(await b.usage([channel, rule])).toEqual([0, 0]);
    const first = ok(await admit(a, [channel, rule], { tokens: 3_000, leaseId: 'lease-1' }));
    ok(await admit(a, [channel, rule], { tokens: 500, leaseId: 'lease-2' }));
    expect(await b.usage([channel, rule])).toEqual([2, 3_500]);
    expect(await b.usage([channel, rule])).toEqual([2, 3_500]);
    await a.release({ leaseId: 'lease-1', concurrencyKeys: [channel.key], tokens: settlements(first, 3_000, 1_200) });
    expect(await b.usage([channel, rule])).toEqual([1, 1_700]);
    // Reading changed nothing: exactly the room left still fits.
    ok(await admit(b, [rule], { tokens: 8_300 }));
    refused(await admit(b, [rule], { tokens: 1 }));
  });
});

describe('redis limiter: token settlements batched with admissions of the same key', () => {
  const limiter = new RedisLimiter(REDIS_URL);
  const redis = new Redis(REDIS_URL);
  afterAll(async () => {
    await limiter.close();
    redis.disconnect();
  });

  it('admits and settlements of one event-loop turn stay exact, in call order, and are written once', async () => {
    const k = ns();
    const rule = tpm(k('tpm'), 10_000);
    const first = ok(await admit(limiter, [rule], { tokens: 5_000 }));
    // One turn: the settlement (refund 4,000), then two admissions that fit only after it.
    const [, x, y, z] = await Promise.all([
      limiter.release({ leaseId: 'r', concurrencyKeys: [], tokens: settlements(first, 5_000, 1_000) }),
      admit(limiter, [rule], { tokens: 4_000 }),
      admit(limiter, [rule], { tokens: 5_000 }),
      admit(limiter, [rule], { tokens: 1 }),
    ]);
    ok(x);
    ok(y);
    refused(z);
    expect(await redis.hget(rule.key, 'n')).toBe('10000');
  });
});
