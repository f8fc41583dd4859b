// Limiter tests against a REAL Redis and the in-process limiter, with identical cases,
// plus the failover limiter against a closed port and a redis-server killed mid-test.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FailoverLimiter, type LimiterLogEntry } from '../../lib/limits/failover-limiter';
import { createLimiter, limiterMetrics } from '../../lib/limits/index';
import { MemoryLimiter } from '../../lib/limits/memory-limiter';
import { encodeCommand, RedisLimiter } from '../../lib/limits/redis-limiter';
import type { AdmitInput, AdmitResult, ConcurrencyRule, GcraRule, Limiter, QuotaRule, Rule, WindowRule } from '../../lib/limits/types';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN_PREFIX = `test:limits:${randomUUID()}:`;
const DAY_MS = 86_400_000;

// ---- helpers ---------------------------------------------------------------------------

/** A key namespace unique to one test, so tests never collide (also across runs). */
function ns(): (name: string) => string {
  const id = randomUUID();
  return (name) => `${RUN_PREFIX}${id}:${name}`;
}

const windowRule = (key: string, limit: number, windowMs: number): WindowRule => ({
  kind: 'window',
  key,
  limit,
  windowMs,
  label: `window ${limit}/${windowMs}ms`,
});
const gcraRule = (key: string, limit: number, windowMs: number): GcraRule => ({
  kind: 'gcra',
  key,
  limit,
  windowMs,
  label: `gcra ${limit}/${windowMs}ms`,
});
const concurrencyRule = (key: string, limit: number): ConcurrencyRule => ({
  kind: 'concurrency',
  key,
  limit,
  label: `concurrency ${limit}`,
});
const quotaRule = (key: string, limit: number, windowMs = DAY_MS): QuotaRule => ({
  kind: 'quota',
  key,
  limit,
  windowMs,
  label: `quota ${limit}`,
});

function admit(limiter: Limiter, rules: Rule[], extra: Partial<Omit<AdmitInput, 'rules'>> = {}): Promise<AdmitResult> {
  return limiter.admit({ rules, leaseId: randomUUID(), leaseTtlMs: 60_000, ...extra });
}

function expectLimit(result: AdmitResult): Extract<AdmitResult, { reason: 'limit' }> {
  if (result.ok || result.reason !== 'limit') throw new Error(`expected a limit refusal, got ${show(result)}`);
  return result;
}

function expectOk(result: AdmitResult): Extract<AdmitResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected admission, got ${show(result)}`);
  return result;
}

function show(result: AdmitResult): string {
  return JSON.stringify(result, (k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

/** Balance available, read through a reservation that must be refused. */
async function availableBalance(limiter: Limiter, key: string): Promise<bigint | 'unknown'> {
  const result = await admit(limiter, [], { reserve: { key, amount: 10n ** 30n } });
  if (result.ok) throw new Error('reservation of 10^30 unexpectedly admitted');
  if (result.reason === 'balance_unknown') return 'unknown';
  if (result.reason !== 'balance') throw new Error(`unexpected ${show(result)}`);
  return result.available;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await sleep(25);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

async function pingOnce(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

const spawned = new Set<ChildProcess>();

async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
    stdio: 'ignore',
  });
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  await waitFor(() => pingOnce(`redis://127.0.0.1:${port}`), 5_000, `redis-server on port ${port}`);
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

// ---- shared cases for both implementations -----------------------------------------------

const implementations: [string, () => Limiter][] = [
  ['memory', () => new MemoryLimiter()],
  ['redis', () => new RedisLimiter(REDIS_URL)],
];

describe.each(implementations)('%s limiter', (_name, make) => {
  let limiter: Limiter;
  beforeAll(() => {
    limiter = make();
  });
  afterAll(async () => {
    await limiter.close();
  });

  it('window of 60 admits the 60th, refuses the 61st with the real remaining window', async () => {
    const k = ns();
    const rule = windowRule(k('rpm'), 60, 60_000);
    for (let i = 1; i <= 60; i++) {
      const result = expectOk(await admit(limiter, [rule]));
      expect(result.states[0].remaining).toBe(60 - i);
    }
    const refused = expectLimit(await admit(limiter, [rule]));
    expect(refused.rule).toEqual(rule);
    // Sub-buckets of 1 s (1/60 of the window): the first admission's bucket leaves 60-61 s from it.
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(59_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(61_000);
    expect(refused.states).toHaveLength(1);
    expect(refused.states[0]).toMatchObject({ limit: 60, remaining: 0 });
  });

  it('window slides: a slot frees when the oldest entry sub-bucket leaves the window', async () => {
    const k = ns();
    const rule = windowRule(k('short'), 3, 500);
    expectOk(await admit(limiter, [rule]));
    await sleep(250);
    expectOk(await admit(limiter, [rule]));
    expectOk(await admit(limiter, [rule]));

    const first = expectLimit(await admit(limiter, [rule]));
    // Only the first entry (about 250 ms old) frees a slot, so the wait is about 250 ms (plus at
    // most one 8 ms sub-bucket).
    expect(first.retryAfterMs).toBeGreaterThan(150);
    expect(first.retryAfterMs).toBeLessThanOrEqual(270);

    await sleep(first.retryAfterMs + 20);
    expectOk(await admit(limiter, [rule]));
    const second = expectLimit(await admit(limiter, [rule]));
    expect(second.retryAfterMs).toBeGreaterThan(150);
    expect(second.retryAfterMs).toBeLessThanOrEqual(510);
  });

  it('mutates nothing when a later rule refuses', async () => {
    const k = ns();
    const window = windowRule(k('a'), 5, 60_000);
    const concurrency = concurrencyRule(k('c'), 5);
    const gcra = gcraRule(k('g'), 5, 60_000);
    const full = windowRule(k('b'), 1, 60_000);
    const balance = k('balance');
    await limiter.initBalance(balance, 1_000n);
    expectOk(await admit(limiter, [full]));

    const refused = expectLimit(await admit(limiter, [window, concurrency, gcra, full], { reserve: { key: balance, amount: 100n } }));
    expect(refused.rule).toEqual(full);
    expect(refused.states.map((s) => s.remaining)).toEqual([5, 5, 5, 0]);

    // Same rules without the full one: every counter is still untouched.
    const after = expectOk(await admit(limiter, [window, concurrency, gcra], { reserve: { key: balance, amount: 100n } }));
    expect(after.states.map((s) => s.remaining)).toEqual([4, 4, 4]);
    expect(await availableBalance(limiter, balance)).toBe(900n);

    // A balance refusal must not consume the rules either.
    const poor = await admit(limiter, [window], { reserve: { key: balance, amount: 5_000n } });
    expect(poor).toEqual({ ok: false, reason: 'balance', available: 900n });
    expect(expectOk(await admit(limiter, [window])).states[0].remaining).toBe(3);
  });

  it('200 concurrent admits against a concurrency cap of 2 admit exactly 2; release frees a slot', async () => {
    const k = ns();
    const rule = concurrencyRule(k('conc'), 2);
    const leaseIds = Array.from({ length: 200 }, () => randomUUID());
    const results = await Promise.all(leaseIds.map((leaseId) => admit(limiter, [rule], { leaseId })));
    const admitted = leaseIds.filter((_, i) => results[i].ok);
    expect(admitted).toHaveLength(2);
    const refusal = expectLimit(results.find((r) => !r.ok)!);
    expect(refusal.retryAfterMs).toBeGreaterThanOrEqual(1);
    expect(refusal.retryAfterMs).toBeLessThanOrEqual(1_000);

    await limiter.release({ leaseId: admitted[0], concurrencyKeys: [rule.key] });
    expect(expectOk(await admit(limiter, [rule])).states[0].remaining).toBe(0);
    expectLimit(await admit(limiter, [rule]));
  });

  it('urgent admits (sent at once) mixed with batched ones in one turn stay exact, in call order', async () => {
    const k = ns();
    const rule = windowRule(k('mixed'), 5, 60_000);
    // Every third call is urgent: it takes the batch queued so far with it, the rest go at the turn's end.
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => admit(limiter, [rule], { urgent: i % 3 === 2 })));
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true, false, false, false, false, false, false, false]);
    expect(results.slice(0, 5).map((r) => expectOk(r).states[0].remaining)).toEqual([4, 3, 2, 1, 0]);
  });

  it('leases expire after leaseTtlMs without release; renew extends them', async () => {
    // Margins of 0.4 TTL on every side: a loaded machine may stretch a sleep by hundreds of ms.
    const ttl = 1500;
    const k = ns();
    const rule = concurrencyRule(k('conc'), 1);
    expectOk(await admit(limiter, [rule], { leaseTtlMs: ttl }));
    const refused = expectLimit(await admit(limiter, [rule], { leaseTtlMs: ttl }));
    expect(refused.retryAfterMs).toBeLessThanOrEqual(ttl);
    await sleep(ttl * 1.2);
    const leaseId = randomUUID();
    expectOk(await admit(limiter, [rule], { leaseId, leaseTtlMs: ttl }));

    await sleep(ttl * 0.6);
    await limiter.renew([rule.key], leaseId, ttl);
    await sleep(ttl * 0.6); // 1.2 TTL after admission: expired without the renewal (valid to 1.6 TTL with it)
    expectLimit(await admit(limiter, [rule]));
    await sleep(ttl * 0.8); // 2.0 TTL after admission: the renewed lease has expired too
    expectOk(await admit(limiter, [rule]));
  });

  it('expired leases never take a slot: with them still stored, the full concurrency is admitted, not more', async () => {
    const k = ns();
    const rule = concurrencyRule(k('conc'), 5);
    for (let i = 0; i < 4; i++) expectOk(await admit(limiter, [rule], { leaseTtlMs: 100 }));
    await sleep(150);
    for (let i = 0; i < 5; i++) expectOk(await admit(limiter, [rule], { leaseTtlMs: 60_000 }));
    expectLimit(await admit(limiter, [rule], { leaseTtlMs: 60_000 }));
  });

  it('quota refuses once usage added by release reaches the limit', async () => {
    const k = ns();
    const rule = quotaRule(k('tokens'), 1_000);
    const lease = randomUUID();
    expect(expectOk(await admit(limiter, [rule], { leaseId: lease })).states[0].remaining).toBe(1_000);
    await limiter.release({ leaseId: lease, concurrencyKeys: [], usage: [{ key: rule.key, windowMs: DAY_MS, amount: 600 }] });
    expect(expectOk(await admit(limiter, [rule])).states[0].remaining).toBe(400);
    await limiter.release({ leaseId: lease, concurrencyKeys: [], usage: [{ key: rule.key, windowMs: DAY_MS, amount: 400 }] });

    const refused = expectLimit(await admit(limiter, [rule]));
    expect(refused.states[0].remaining).toBe(0);
    // The current hour's bucket leaves the 24 h window 23-24 h from now.
    expect(refused.retryAfterMs).toBeGreaterThan(DAY_MS - 3_600_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(DAY_MS);
  });

  it('balance: unknown, init, reserve, insufficient, settle, adjust, forget', async () => {
    const k = ns();
    const key = k('balance');
    const reserve = (amount: bigint) => admit(limiter, [], { reserve: { key, amount } });

    expect(await reserve(1n)).toEqual({ ok: false, reason: 'balance_unknown' });
    await limiter.adjustBalance(key, 500n); // not loaded: no-op
    expect(await reserve(1n)).toEqual({ ok: false, reason: 'balance_unknown' });

    await limiter.initBalance(key, 1_000n);
    await limiter.initBalance(key, 5n); // NX: already loaded
    const lease = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: lease, reserve: { key, amount: 400n } }));
    expect(await reserve(700n)).toEqual({ ok: false, reason: 'balance', available: 600n });

    // Reserved 400, actual cost 300: settle gives back 100.
    await limiter.release({ leaseId: lease, concurrencyKeys: [], settle: { key, delta: 100n } });
    expectOk(await reserve(700n));
    expect(await reserve(1n)).toEqual({ ok: false, reason: 'balance', available: 0n });

    await limiter.adjustBalance(key, 50n);
    expect(await availableBalance(limiter, key)).toBe(50n);
    await limiter.forgetBalance(key);
    expect(await reserve(1n)).toEqual({ ok: false, reason: 'balance_unknown' });
    // Settling into a forgotten balance does nothing: it is reloaded from the database.
    await limiter.release({ leaseId: lease, concurrencyKeys: [], settle: { key, delta: 100n } });
    expect(await reserve(1n)).toEqual({ ok: false, reason: 'balance_unknown' });
  });

  it('reservation leases: an unsettled reservation returns to the balance once expired; a late settlement charges the cost only, once', async () => {
    const key = ns()('balance');
    await limiter.initBalance(key, 1_000n);
    // A request admitted by an instance that then dies: never settled, never renewed.
    const crashed = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: crashed, leaseTtlMs: 150, reserve: { key, amount: 400n } }));
    // A live one, renewed past its first expiry (a long stream).
    const live = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: live, leaseTtlMs: 150, reserve: { key, amount: 100n } }));
    expect(await availableBalance(limiter, key)).toBe(500n);
    await sleep(80);
    await limiter.renew([], live, 400, { key, amount: 100n });
    await sleep(120);
    // The crashed request's 400 is back; the live one's 100 is still held.
    expect(await availableBalance(limiter, key)).toBe(900n);
    // The live one settles at cost 30: 70 back.
    await limiter.release({ leaseId: live, concurrencyKeys: [], settle: { key, delta: 70n, reserved: 100n } });
    expect(await availableBalance(limiter, key)).toBe(970n);
    // Settled again (a replay): nothing changes.
    await limiter.release({ leaseId: live, concurrencyKeys: [], settle: { key, delta: 70n, reserved: 100n } });
    expect(await availableBalance(limiter, key)).toBe(970n);
    // The "crashed" one was only slow: its late settlement (cost 250) charges just the cost, once.
    await limiter.release({ leaseId: crashed, concurrencyKeys: [], settle: { key, delta: 150n, reserved: 400n } });
    expect(await availableBalance(limiter, key)).toBe(720n);
    await limiter.release({ leaseId: crashed, concurrencyKeys: [], settle: { key, delta: 150n, reserved: 400n } });
    expect(await availableBalance(limiter, key)).toBe(720n);
    // Settled exactly at the reservation (delta 0): the lease is gone, nothing returns later.
    const exact = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: exact, leaseTtlMs: 100, reserve: { key, amount: 20n } }));
    await limiter.release({ leaseId: exact, concurrencyKeys: [], settle: { key, delta: 0n, reserved: 20n } });
    await sleep(150);
    expect(await availableBalance(limiter, key)).toBe(700n);
  });

  it('reservation leases in one batch (admits and settlements of one event-loop turn) stay exact', async () => {
    const key = ns()('balance');
    await limiter.initBalance(key, 1_000n);
    const leases = Array.from({ length: 5 }, () => randomUUID());
    const admitted = await Promise.all(leases.map((leaseId) => admit(limiter, [], { leaseId, leaseTtlMs: 100, reserve: { key, amount: 100n } })));
    admitted.forEach(expectOk);
    // Three settle (cost 40 each) in one turn; two are never settled.
    await Promise.all(leases.slice(0, 3).map((leaseId) => limiter.release({ leaseId, concurrencyKeys: [], settle: { key, delta: 60n, reserved: 100n } })));
    expect(await availableBalance(limiter, key)).toBe(680n);
    await sleep(150);
    expect(await availableBalance(limiter, key)).toBe(880n);
  });

  it('a charge id is settled once: the same work admitted and settled again (a batch line after a takeover) charges nothing more', async () => {
    const key = ns()('balance');
    await limiter.initBalance(key, 1_000n);
    const chargeId = `batch_req_${randomUUID()}`;
    // First run: reserved 400, cost 300.
    const first = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: first, reserve: { key, amount: 400n } }));
    await limiter.release({ leaseId: first, concurrencyKeys: [], settle: { key, delta: 100n, reserved: 400n }, chargeId });
    expect(await availableBalance(limiter, key)).toBe(700n);
    // Run again under the same charge id (same or another lease): the reservation comes back whole.
    for (const again of [first, randomUUID()]) {
      expectOk(await admit(limiter, [], { leaseId: again, reserve: { key, amount: 400n } }));
      expect(await availableBalance(limiter, key)).toBe(300n);
      await limiter.release({ leaseId: again, concurrencyKeys: [], settle: { key, delta: 100n, reserved: 400n }, chargeId });
      expect(await availableBalance(limiter, key)).toBe(700n);
    }
    // Another charge id is charged as usual.
    const other = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: other, reserve: { key, amount: 400n } }));
    await limiter.release({ leaseId: other, concurrencyKeys: [], settle: { key, delta: 100n, reserved: 400n }, chargeId: `${chargeId}x` });
    expect(await availableBalance(limiter, key)).toBe(400n);
  });

  it('reservation leases: a balance reloaded from the database drops its open reservations; their settlements charge the cost', async () => {
    const key = ns()('balance');
    await limiter.initBalance(key, 1_000n);
    const lease = randomUUID();
    expectOk(await admit(limiter, [], { leaseId: lease, reserve: { key, amount: 400n } }));
    await limiter.forgetBalance(key);
    await limiter.initBalance(key, 1_000n); // the database never saw the reservation
    await limiter.release({ leaseId: lease, concurrencyKeys: [], settle: { key, delta: 100n, reserved: 400n } });
    expect(await availableBalance(limiter, key)).toBe(700n); // cost 300 charged once
  });

  it('applyCredit applies each ledger entry once, and only to a loaded balance', async () => {
    const key = ns()('balance');
    const entry = () => `${RUN_PREFIX}${randomUUID()}`;
    const early = entry();
    expect(await limiter.applyCredit(early, key, 500n)).toBe(true); // not loaded: the load's database read has it
    await limiter.initBalance(key, 1_000n, [], [early]);
    expect(await limiter.applyCredit(early, key, 500n)).toBe(true);
    expect(await availableBalance(limiter, key)).toBe(1_000n);
    const credit = entry();
    expect(await limiter.applyCredit(credit, key, 250n)).toBe(true);
    expect(await limiter.applyCredit(credit, key, 250n)).toBe(true);
    expect(await availableBalance(limiter, key)).toBe(1_250n);
  });

  it('a credit applied while a load is under way that read the database before it committed is added by that load, once', async () => {
    const key = ns()('balance');
    const credit = `${RUN_PREFIX}${randomUUID()}`;
    // The load read 1,000 (without the credit); the credit commits and is applied before the load writes.
    expect(await limiter.applyCredit(credit, key, 300n)).toBe(true);
    await limiter.initBalance(key, 1_000n, [], []);
    expect(await availableBalance(limiter, key)).toBe(1_300n);
    expect(await limiter.applyCredit(credit, key, 300n)).toBe(true);
    await limiter.initBalance(key, 5n, [], []); // already loaded: nothing changes
    expect(await availableBalance(limiter, key)).toBe(1_300n);
  });

  it('balance comparisons are exact beyond 2^53', async () => {
    const k = ns();
    const key = k('big');
    const big = 2n ** 53n + 1n;
    await limiter.initBalance(key, big);
    expect(await admit(limiter, [], { reserve: { key, amount: big + 1n } })).toEqual({
      ok: false,
      reason: 'balance',
      available: big,
    });
    expectOk(await admit(limiter, [], { reserve: { key, amount: big } }));
    expect(await availableBalance(limiter, key)).toBe(0n);
  });

  it('GCRA admits `limit` in a burst and refuses the next until conforming', async () => {
    const k = ns();
    const rule = gcraRule(k('global'), 10, 1_000);
    for (let i = 0; i < 10; i++) {
      expect(expectOk(await admit(limiter, [rule])).states[0].remaining).toBe(9 - i);
    }
    const refused = expectLimit(await admit(limiter, [rule]));
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(100); // one emission interval
    await sleep(refused.retryAfterMs + 5);
    expectOk(await admit(limiter, [rule]));
  });

  it('GCRA keys shared by the admits of one batch: each sees the ones before it, in call order', async () => {
    const k = ns();
    // Admits of one event-loop turn travel together; the shared GCRA states are written back once.
    const global = gcraRule(k('g'), 10, 1_000);
    const own = [gcraRule(k('a'), 4, 60_000), gcraRule(k('b'), 4, 60_000)];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => admit(limiter, [global, own[i % 2]])));
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true, true, true, true, false, false, false, false]);
    expect(results.slice(0, 8).map((r) => expectOk(r).states.map((s) => s.remaining))).toEqual([
      [9, 3],
      [8, 3],
      [7, 2],
      [6, 2],
      [5, 1],
      [4, 1],
      [3, 0],
      [2, 0],
    ]);
    // The refused ones (by their own key) took nothing from the shared one: the next turn sees 2 left.
    const next = await Promise.all([admit(limiter, [global]), admit(limiter, [global]), admit(limiter, [global])]);
    expect(next.map((r) => r.ok)).toEqual([true, true, false]);
    expect(expectOk(next[1]).states[0].remaining).toBe(0);
  });

  it('reports states for all rules in order on success and on refusal', async () => {
    const k = ns();
    const rules = [windowRule(k('w'), 2, 60_000), quotaRule(k('q'), 10), concurrencyRule(k('c'), 1)];
    const ok = expectOk(await admit(limiter, rules));
    expect(ok.states.map((s) => [s.rule, s.limit, s.remaining])).toEqual([
      [rules[0], 2, 1],
      [rules[1], 10, 10],
      [rules[2], 1, 0],
    ]);
    const refused = expectLimit(await admit(limiter, rules));
    expect(refused.rule).toEqual(rules[2]);
    expect(refused.states.map((s) => s.rule)).toEqual(rules);
  });
});

// ---- Redis only ----------------------------------------------------------------------------

describe('redis limiter across instances', () => {
  const a = new RedisLimiter(REDIS_URL);
  const b = new RedisLimiter(REDIS_URL);
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('two instances on separate connections enforce one limit together', async () => {
    const k = ns();
    const concurrency = concurrencyRule(k('conc'), 3);
    const window = windowRule(k('rpm'), 10, 60_000);
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => admit(i % 2 === 0 ? a : b, [concurrency])));
    expect(results.filter((r) => r.ok)).toHaveLength(3);

    const windowResults = await Promise.all(Array.from({ length: 50 }, (_, i) => admit(i % 2 === 0 ? a : b, [window])));
    expect(windowResults.filter((r) => r.ok)).toHaveLength(10);
  });
});

describe('window rules: bounded, exact state', () => {
  /** The most admissions inside any span of `windowMs` (admission times ascending). */
  function maxInAnySpan(times: number[], windowMs: number): number {
    let most = 0;
    for (let i = 0, j = 0; j < times.length; j++) {
      while (times[j] - times[i] >= windowMs) i++;
      most = Math.max(most, j - i + 1);
    }
    return most;
  }

  it('a limit above 10,000 per minute driven for three minutes never admits more than the limit in any minute', async () => {
    let now = 1_700_000_000_123;
    const limiter = new MemoryLimiter({ now: () => now, sweepIntervalMs: 0 });
    const rule = windowRule('big', 12_000, 60_000);
    const admitted: number[] = [];
    // ~30,000 attempts a minute, in bursts: far more than the limit, unevenly spread.
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    while (now < 1_700_000_000_123 + 180_000) {
      const burst = random() < 0.05 ? 400 : 1;
      for (let i = 0; i < burst; i++) if ((await admit(limiter, [rule])).ok) admitted.push(now);
      now += Math.floor(random() * 4) + 1;
    }
    expect(maxInAnySpan(admitted, 60_000)).toBeLessThanOrEqual(12_000);
    // Refusing at most one sub-bucket early: nearly the whole limit is usable every minute.
    expect(admitted.length).toBeGreaterThan(3 * 12_000 * 0.95);
    await limiter.close();
  });

  it('Retry-After is truthful: refused until then, admitted from then on', async () => {
    let now = 1_700_000_000_500;
    const limiter = new MemoryLimiter({ now: () => now, sweepIntervalMs: 0 });
    const rule = windowRule('rt', 100, 60_000);
    for (let i = 0; i < 100; i++) {
      expectOk(await admit(limiter, [rule]));
      now += 137;
    }
    const refused = expectLimit(await admit(limiter, [rule]));
    const at = now;
    now = at + refused.retryAfterMs - 1;
    expectLimit(await admit(limiter, [rule]));
    now = at + refused.retryAfterMs;
    expectOk(await admit(limiter, [rule]));
    await limiter.close();
  });

  it('Redis: 13,000 concurrent attempts under 12,000 per minute admit exactly 12,000', async () => {
    const a = new RedisLimiter(REDIS_URL);
    const b = new RedisLimiter(REDIS_URL);
    try {
      const rule = windowRule(ns()('big'), 12_000, 60_000);
      let ok = 0;
      for (let round = 0; round < 26; round++) {
        const results = await Promise.all(Array.from({ length: 500 }, (_, i) => admit(i % 2 === 0 ? a : b, [rule])));
        ok += results.filter((r) => r.ok).length;
      }
      expect(ok).toBe(12_000);
      const refused = expectLimit(await admit(a, [rule]));
      expect(refused.retryAfterMs).toBeGreaterThan(50_000);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(61_000);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("Redis: one account's limiter memory after 10,000 admissions under 10,000/min and 10,000/h stays under 10 KB", async () => {
    const limiter = new RedisLimiter(REDIS_URL);
    try {
      const k = ns();
      const rules = [windowRule(k('rpm'), 10_000, 60_000), windowRule(k('rph'), 10_000, 3_600_000), concurrencyRule(k('conc'), 1_000)];
      for (let round = 0; round < 20; round++) {
        const ids = Array.from({ length: 500 }, () => randomUUID());
        const results = await Promise.all(ids.map((leaseId) => limiter.admit({ rules, leaseId, leaseTtlMs: 60_000 })));
        expect(results.every((r) => r.ok)).toBe(true);
        await Promise.all(ids.map((leaseId) => limiter.release({ leaseId, concurrencyKeys: [k('conc')] })));
      }
      let bytes = 0;
      for (const key of [k('rpm'), k('rph'), k('conc')]) bytes += Number((await limiter.client.call('MEMORY', 'USAGE', key)) ?? 0);
      expect(await limiter.client.hget(k('rpm'), 'n')).toBe('10000');
      expect(bytes).toBeLessThan(10_000);
    } finally {
      await limiter.close();
    }
  });
});

describe('redis limiter: key expiry', () => {
  const limiter = new RedisLimiter(REDIS_URL);
  const redis = limiter.client;
  afterAll(() => limiter.close());

  it('a concurrency set lives twice its longest lease: a shorter lease never shortens it, a longer one lengthens it', async () => {
    const k = ns();
    const rule = concurrencyRule(k('conc'), 10);
    expectOk(await admit(limiter, [rule], { leaseTtlMs: 60_000 }));
    const first = await redis.pttl(k('conc'));
    expect(first).toBeGreaterThan(119_000);
    expect(first).toBeLessThanOrEqual(120_000);
    expectOk(await admit(limiter, [rule], { leaseTtlMs: 1_000 }));
    expect(await redis.pttl(k('conc'))).toBeGreaterThan(119_000);
    expectOk(await admit(limiter, [rule], { leaseTtlMs: 300_000 }));
    expect(await redis.pttl(k('conc'))).toBeGreaterThan(599_000);
  });

  it('a set emptied by pruning its expired leases is made again with a TTL', async () => {
    const k = ns();
    const rule = concurrencyRule(k('conc'), 1);
    expectOk(await admit(limiter, [rule], { leaseTtlMs: 100 }));
    await sleep(150); // the lease has expired; the set (TTL 200 ms) is still there
    expect(await redis.zcard(k('conc'))).toBe(1);
    expectOk(await admit(limiter, [rule], { leaseTtlMs: 60_000 }));
    expect(await redis.zcard(k('conc'))).toBe(1);
    expect(await redis.pttl(k('conc'))).toBeGreaterThan(119_000);
  });

  it('leases are scored in whole milliseconds; a window is a hash of sub-bucket counts', async () => {
    const k = ns();
    const window = windowRule(k('w'), 10, 60_000);
    const conc = concurrencyRule(k('c'), 10);
    const [seconds, micros] = await redis.time();
    const before = Number(seconds) * 1000 + Number(micros) / 1000;
    expectOk(await admit(limiter, [window, conc], { leaseTtlMs: 30_000 }));
    expectOk(await admit(limiter, [window], { leaseTtlMs: 30_000 }));
    const state = await redis.hgetall(k('w'));
    const bucket = Math.floor(before / 1000);
    expect(state.n).toBe('2');
    expect(Number(state.lo)).toBeGreaterThanOrEqual(bucket);
    expect(Number(state.lo)).toBeLessThanOrEqual(bucket + 1);
    expect(Object.keys(state).sort()).toEqual([state.lo, 'lo', 'n'].sort());
    // Kept until its newest bucket leaves the window (61 buckets of 1 s).
    expect(await redis.pttl(k('w'))).toBeGreaterThan(59_000);
    expect(await redis.pttl(k('w'))).toBeLessThanOrEqual(61_000);
    const [, lease] = await redis.zrange(k('c'), 0, 0, 'WITHSCORES');
    // Integers: a fractional score costs Redis a slow number conversion on every call that carries it.
    expect(lease).toMatch(/^\d+$/);
    expect(Number(lease) - before).toBeGreaterThan(30_000 - 2);
    expect(Number(lease) - before).toBeLessThanOrEqual(30_000 + 1_000);
  });

  it('GCRA states, deny markers and the balance are read together: each still decides on its own', async () => {
    const k = ns();
    const g1 = gcraRule(k('g1'), 2, 60_000);
    const g2 = gcraRule(k('g2'), 3, 60_000);
    const balance = k('bal');
    const denyKeys = [k('deny:u'), k('deny:k')];
    await limiter.initBalance(balance, 1_000n);
    const input = { reserve: { key: balance, amount: 100n }, denyKeys };
    const ok = expectOk(await admit(limiter, [g1, windowRule(k('w'), 5, 60_000), g2], input));
    expect(ok.states.map((s) => s.remaining)).toEqual([1, 4, 2]);
    expect(ok.balance).toBe(900n);
    expectOk(await admit(limiter, [g1, g2], input));
    const refused = expectLimit(await admit(limiter, [g2, g1], input));
    expect(refused.rule).toBe(g1);
    expect(refused.states.map((s) => s.remaining)).toEqual([1, 0]);
    expect(await redis.get(balance)).toBe('800');
    await redis.set(k('deny:k'), '1');
    expect(await admit(limiter, [g2], input)).toEqual({ ok: false, reason: 'denied', index: 1 });
    await redis.del(balance);
    await redis.del(k('deny:k'));
    expect(await admit(limiter, [g2], input)).toEqual({ ok: false, reason: 'balance_unknown' });
  });

  it('GCRA states of a batch are written back once per key when the call ends, with the state and TTL of the last admit', async () => {
    const k = ns();
    const rule = gcraRule(k('g'), 100, 60_000); // one emission interval: 600 ms
    const sets: string[] = [];
    const monitor = await (redis as Redis).monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'set' && args[1] === rule.key) sets.push(args[2]);
    });
    /** Redis's clock in milliseconds, the one the admission script reads. */
    const redisNow = async (): Promise<number> => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Number(micros) / 1000;
    };
    let before: number, after: number;
    try {
      before = await redisNow();
      const results = await Promise.all(Array.from({ length: 5 }, () => admit(limiter, [rule])));
      after = await redisNow();
      expect(results.map((r) => expectOk(r).states[0].remaining)).toEqual([99, 98, 97, 96, 95]);
      await sleep(50); // MONITOR lines trail the replies
    } finally {
      monitor.disconnect();
    }
    expect(sets).toHaveLength(1);
    // What was written is the last admit's state: five emission intervals past the batch's clock,
    // which Redis read between `before` and `after` (bounds from timestamps, not from how fast this
    // machine happens to be: a loaded host once read the TTL 61 ms after the admit).
    expect(await redis.get(rule.key)).toBe(sets[0]);
    const tat = Number(sets[0]);
    expect(tat - 5 * 600).toBeGreaterThanOrEqual(before - 0.001);
    expect(tat - 5 * 600).toBeLessThanOrEqual(after + 0.001);
    // The key expires when that state stops mattering: at its TAT (PX rounds up to a whole millisecond).
    const ttlBefore = await redisNow();
    const ttl = await redis.pttl(rule.key);
    const ttlAfter = await redisNow();
    expect(ttl).toBeGreaterThanOrEqual(Math.floor(tat - ttlAfter) - 1);
    expect(ttl).toBeLessThanOrEqual(Math.ceil(tat - ttlBefore) + 1);
  });
});

describe('redis limiter: command timeouts', () => {
  /** Keeps the event loop busy, as a burst of requests does on a slow machine. */
  function busy(ms: number): void {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // spin
    }
  }

  it('a reply that arrived while the event loop was busy past the timeout is not declared timed out', async () => {
    const limiter = new RedisLimiter(new Redis(REDIS_URL, { commandTimeout: 40 }), { ownsClient: true });
    try {
      const k = ns();
      const rule = concurrencyRule(k('conc'), 100);
      await limiter.initBalance(k('bal'), 10_000n);
      for (let i = 0; i < 4; i++) {
        const admitted = limiter.admit({ rules: [rule], leaseId: randomUUID(), leaseTtlMs: 60_000, reserve: { key: k('bal'), amount: 1n }, urgent: true });
        const denied = limiter.denied([k('deny')]);
        const init = limiter.initBalance(k('bal'), 5n);
        busy(120); // Redis answers in well under a millisecond; the replies wait in the socket
        expectOk(await admitted);
        expect(await denied).toBe(-1);
        await init;
      }
      expect(await limiter.client.zcard(rule.key)).toBe(4);
    } finally {
      await limiter.close();
    }
  });

  it('a server that does not answer still times out', async () => {
    const silent = createServer((socket) => socket.on('data', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const client = new Redis({ host: '127.0.0.1', port, commandTimeout: 50, enableReadyCheck: false, maxRetriesPerRequest: 0 });
    const limiter = new RedisLimiter(client, { ownsClient: false });
    try {
      await new Promise((resolve) => client.once('ready', resolve));
      const started = performance.now();
      await expect(limiter.admit({ rules: [concurrencyRule('silent:conc', 1)], leaseId: 'x', leaseTtlMs: 1_000, urgent: true })).rejects.toThrow(
        'Command timed out',
      );
      await expect(limiter.denied(['silent:deny'])).rejects.toThrow('Command timed out');
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      client.disconnect();
      silent.close();
    }
  });
});

describe('redis limiter: urgent calls', () => {
  const limiter = new RedisLimiter(REDIS_URL);
  afterAll(() => limiter.close());

  it('an urgent release is written at once, a batched one when the event-loop turn ends; both settle', async () => {
    const k = ns();
    const conc = concurrencyRule(k('conc'), 1);
    const balance = k('bal');
    await limiter.initBalance(balance, 1_000n);
    const sent = vi.spyOn(limiter.client, 'sendCommand');
    try {
      for (const urgent of [true, false]) {
        const leaseId = randomUUID();
        expectOk(await limiter.admit({ rules: [conc], leaseId, leaseTtlMs: 60_000, reserve: { key: balance, amount: 300n } }));
        sent.mockClear();
        const released = limiter.release({ leaseId, concurrencyKeys: [conc.key], settle: { key: balance, delta: 100n }, urgent });
        // A stream's release must be on the wire before its last bytes go to the client.
        expect(sent).toHaveBeenCalledTimes(urgent ? 1 : 0);
        await released;
        expect(sent).toHaveBeenCalledTimes(1);
      }
    } finally {
      sent.mockRestore();
    }
    // Both releases freed the slot and returned 100 of the 300 reserved: 1,000 - 2 x 200.
    const after = expectOk(await limiter.admit({ rules: [conc], leaseId: randomUUID(), leaseTtlMs: 60_000, reserve: { key: balance, amount: 1n } }));
    expect(after.balance).toBe(599n);
  });
});

describe('redis limiter: commands encoded by the limiter', () => {
  const limiter = new RedisLimiter(REDIS_URL);
  afterAll(() => limiter.close());

  it('frames every argument exactly as ioredis does, with UTF-8 byte lengths for non-ASCII text', () => {
    for (const args of [
      ['sha', 2, 'gw:u:abc:rpm', 'gw:{m:gpt-4o}:rpm', 'lease-1', 60_000, ''],
      ['sha', 1, 'gw:m:modèle-ü:rpm', '中文', 3.5, 'a\r\nb'],
    ]) {
      const reference = new Command('evalsha', args);
      reference.stringifyArguments();
      expect(encodeCommand('evalsha', [args.slice(0, 2), args.slice(2)])).toBe(reference.toWritable({}));
    }
  });

  it('admits under keys with non-ASCII characters (model names come from the operator config)', async () => {
    const k = ns();
    const rule = windowRule(k('modèle-ü:rpm'), 2, 60_000);
    expectOk(await limiter.admit({ rules: [rule], leaseId: randomUUID(), leaseTtlMs: 60_000 }));
    expect(await limiter.client.hget(rule.key, 'n')).toBe('1');
  });

  it('falls back to EVAL when Redis has lost the scripts (SCRIPT FLUSH), single and batched', async () => {
    const k = ns();
    const rule = windowRule(k('rpm'), 10, 60_000);
    await limiter.client.script('FLUSH');
    expectOk(await limiter.admit({ rules: [rule], leaseId: randomUUID(), leaseTtlMs: 60_000 }));
    await limiter.client.script('FLUSH');
    const batch = await Promise.all([1, 2, 3].map(() => limiter.admit({ rules: [rule], leaseId: randomUUID(), leaseTtlMs: 60_000 })));
    batch.forEach(expectOk);
    expect(await limiter.client.hget(rule.key, 'n')).toBe('4');
  });
});

describe('redis limiter deny keys', () => {
  const limiter = new RedisLimiter(REDIS_URL);
  const client = new Redis(REDIS_URL);
  afterAll(async () => {
    await limiter.close();
    client.disconnect();
  });

  it('an existing deny key refuses before anything is counted or reserved; absent ones change nothing', async () => {
    const k = ns();
    const window = windowRule(k('rpm'), 10, 60_000);
    const concurrency = concurrencyRule(k('conc'), 2);
    const balance = k('balance');
    await limiter.initBalance(balance, 1_000n);
    const deny = [k('deny-user'), k('deny-key')];
    const input = { reserve: { key: balance, amount: 100n }, denyKeys: deny };

    expectOk(await admit(limiter, [window, concurrency], input));
    await client.set(deny[1], '1');
    expect(await admit(limiter, [window, concurrency], input)).toEqual({ ok: false, reason: 'denied', index: 1 });
    await client.set(deny[0], '1');
    expect(await admit(limiter, [window, concurrency], input)).toEqual({ ok: false, reason: 'denied', index: 0 });
    // Batched with other calls of the same turn, the same answer.
    const batch = await Promise.all([admit(limiter, [window], input), admit(limiter, [window]), admit(limiter, [window], input)]);
    expect(batch.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['denied', 'ok', 'denied']);

    expect(await client.hget(window.key, 'n')).toBe('2'); // the first admission and the undenied one
    expect(await client.zcard(concurrency.key)).toBe(1);
    expect(await client.get(balance)).toBe('900');
    await client.del(...deny);
    expectOk(await admit(limiter, [window, concurrency], input));
  });
});

describe('memory limiter housekeeping', () => {
  it('sweeps expired keys so nothing leaks', async () => {
    const limiter = new MemoryLimiter({ sweepIntervalMs: 0 });
    const k = ns();
    for (let i = 0; i < 50; i++) {
      await admit(limiter, [windowRule(k(`w${i}`), 5, 50), gcraRule(k(`g${i}`), 5, 50), concurrencyRule(k(`c${i}`), 5)], {
        leaseTtlMs: 50,
      });
    }
    expect(limiter.size()).toBe(150);
    await sleep(150);
    limiter.sweep();
    expect(limiter.size()).toBe(0);
    await limiter.close();
  });
});

// ---- failover --------------------------------------------------------------------------------

describe('failover limiter', () => {
  afterAll(async () => {
    await Promise.all([...spawned].map(killHard));
  });

  it('answers from memory quickly when Redis is unreachable', async () => {
    const port = await freePort(); // nothing listens there
    const logs: LimiterLogEntry[] = [];
    const limiter = FailoverLimiter.fromUrl(`redis://127.0.0.1:${port}`, { log: (e) => logs.push(e) });
    try {
      const rule = concurrencyRule('offline:conc', 1);
      const { value, ms } = await timed(() => admit(limiter, [rule]));
      expect(value.ok).toBe(true);
      expect(ms).toBeLessThan(500);
      expect(limiter.usingFallback).toBe(true);
      expect(limiterMetrics(limiter)).toEqual({ backend: 'memory', fallbackCount: 1 });

      // Limits are still enforced in-process, and nothing throws.
      expectLimit(await admit(limiter, [rule]));
      await limiter.initBalance('offline:balance', 10n);
      expect(await availableBalance(limiter, 'offline:balance')).toBe(10n);
      await limiter.renew([rule.key], 'x', 1_000);
      await limiter.forgetBalance('offline:balance');
      expect(logs.filter((e) => e.level === 'warn')).toHaveLength(1);
      expect(logs[0].msg).toBe('limiter falling back to in-process');
    } finally {
      await limiter.close();
    }
  });

  it('falls back when redis-server dies and returns when it is back', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let server = await startRedisServer(port);
    const logs: LimiterLogEntry[] = [];
    const limiter = FailoverLimiter.fromUrl(url, { log: (e) => logs.push(e) });
    const inspect = () => {
      const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
      client.on('error', () => {});
      return client;
    };
    try {
      const k = ns();
      const shared = concurrencyRule(k('conc'), 100);
      expectOk(await admit(limiter, [shared]));
      expect(limiter.usingFallback).toBe(false);
      const before = inspect();
      expect(await before.zcard(shared.key)).toBe(1); // really admitted in Redis
      before.disconnect();

      await killHard(server);
      for (let i = 0; i < 5; i++) {
        const { value, ms } = await timed(() => admit(limiter, [shared]));
        expect(value.ok).toBe(true);
        expect(ms).toBeLessThan(500);
      }
      expect(limiter.usingFallback).toBe(true);
      expect(logs.filter((e) => e.msg === 'limiter falling back to in-process')).toHaveLength(1);

      // A lease taken in memory during the outage...
      const single = concurrencyRule(k('single'), 1);
      const memoryLease = randomUUID();
      expectOk(await admit(limiter, [single], { leaseId: memoryLease }));

      server = await startRedisServer(port);
      await waitFor(() => !limiter.usingFallback, 5_000, 'the limiter to return to Redis');
      expect(logs.some((e) => e.msg === 'limiter back on redis')).toBe(true);

      // ...is released in memory even though Redis is back.
      await limiter.release({ leaseId: memoryLease, concurrencyKeys: [single.key] });
      expectOk(await limiter.memory.admit({ rules: [single], leaseId: randomUUID(), leaseTtlMs: 1_000 }));

      const after = concurrencyRule(k('after'), 5);
      expectOk(await admit(limiter, [after]));
      const check = inspect();
      expect(await check.zcard(after.key)).toBe(1);
      check.disconnect();
      expect(limiterMetrics(limiter).backend).toBe('redis');
    } finally {
      await limiter.close();
      await killHard(server);
    }
  });
});

describe('failover limiter: money while Redis is unreachable', () => {
  afterAll(async () => {
    await Promise.all([...spawned].map(killHard));
  });

  it('a credit is not applied to an in-process balance as if shared: false while Redis is unreachable, applied once when it is back', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const limiter = FailoverLimiter.fromUrl(url, { log: () => {}, creditConnectGraceMs: 200 });
    let server: ChildProcess | undefined;
    try {
      const key = ns()('balance');
      const entry = `${RUN_PREFIX}${randomUUID()}`;
      expect(await limiter.applyCredit(entry, key, 500n)).toBe(false);
      server = await startRedisServer(port);
      await waitFor(() => limiter.redis.client.status === 'ready', 5_000, 'the client to connect');
      const direct = new RedisLimiter(url);
      await direct.initBalance(key, 1_000n);
      expect(await limiter.applyCredit(entry, key, 500n)).toBe(true);
      expect(await limiter.applyCredit(entry, key, 500n)).toBe(true);
      expect(await availableBalance(direct, key)).toBe(1_500n);
      await direct.close();
    } finally {
      await limiter.close();
      if (server) await killHard(server);
    }
  });

  it('a settlement that cannot reach Redis is sent when it is back: the balance ends exact', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let server = await startRedisServer(port);
    const limiter = FailoverLimiter.fromUrl(url, { log: () => {} });
    const direct = () => new RedisLimiter(new Redis(url, { lazyConnect: false, retryStrategy: () => 200 }), { ownsClient: true });
    try {
      const key = ns()('balance');
      await limiter.initBalance(key, 1_000n);
      const lease = randomUUID();
      expectOk(await admit(limiter, [], { leaseId: lease, reserve: { key, amount: 400n } }));
      await killHard(server);
      // Reserved 400, cost 300: the settlement falls back while Redis is down.
      await limiter.release({ leaseId: lease, concurrencyKeys: [], settle: { key, delta: 100n, reserved: 400n } });
      expect(limiter.pendingSettlementCount).toBe(1);
      // Same data as before the kill would need persistence; restart empty and reload the state by hand.
      server = await startRedisServer(port);
      const d = direct();
      await waitFor(() => d.client.status === 'ready', 5_000, 'inspect client');
      await d.client.set(key, '600');
      await d.client.zadd(`${key}:res`, String(Date.now() + 60_000), `${lease}|400`);
      await waitFor(() => !limiter.usingFallback && limiter.pendingSettlementCount === 0, 5_000, 'the settlement to be sent');
      await sleep(50);
      expect(await d.client.get(key)).toBe('700');
      expect(await d.client.zcard(`${key}:res`)).toBe(0);
      await d.close();
    } finally {
      await limiter.close();
      await killHard(server);
    }
  });
});

describe('createLimiter', () => {
  it('builds a memory limiter without a URL and a failover limiter with one', async () => {
    const memory = createLimiter();
    expect(memory).toBeInstanceOf(MemoryLimiter);
    expect(limiterMetrics()).toEqual({ backend: 'memory', fallbackCount: 0 });
    await memory.close();

    const redis = createLimiter(REDIS_URL);
    expect(redis).toBeInstanceOf(FailoverLimiter);
    expectOk(await admit(redis, [windowRule(ns()('w'), 1, 1_000)]));
    expect(limiterMetrics()).toEqual({ backend: 'redis', fallbackCount: 0 });
    await redis.close();
  });
});

// Balance keys have no TTL: remove everything this run wrote to the shared Redis.
afterAll(async () => {
  const client = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${RUN_PREFIX}*`, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
});
