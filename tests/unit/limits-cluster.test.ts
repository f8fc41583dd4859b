// The limiter on a real Redis Cluster (three primaries, three replicas, started here): keys of one
// account in one slot, the shared layers (global rate, a model's caps) on their own slots in
// parallel calls, exact at every boundary across two limiter instances, a refused part undoing the
// others, deny markers, balances, and a primary killed mid-load.

import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailoverLimiter } from '../../lib/limits/failover-limiter';
import { accountKey, channelKey, modelKey } from '../../lib/limits/keys';
import { RedisLimiter } from '../../lib/limits/redis-limiter';
import type { AdmitInput, AdmitResult, Limiter, Rule } from '../../lib/limits/types';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster';

let cluster: TestCluster;
let a: RedisLimiter;
let b: RedisLimiter;
const clients: Cluster[] = [];

function client(): Cluster {
  const c = new Cluster(cluster.nodes, { redisOptions: { commandTimeout: 2_000 } });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  cluster = await startRedisCluster();
  a = new RedisLimiter(client());
  b = new RedisLimiter(client());
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await cluster?.stop();
});

const account = () => randomUUID();
const admit = (limiter: Limiter, rules: Rule[], extra: Partial<AdmitInput> = {}): Promise<AdmitResult> =>
  limiter.admit({ rules, leaseId: randomUUID(), leaseTtlMs: 60_000, ...extra });
const global: Rule = { kind: 'gcra', key: 'gw:global', limit: 1_000_000, windowMs: 1000, label: 'global' };

describe('limiter on Redis Cluster', () => {
  it("an account's keys share one slot; the global and model layers have their own", async () => {
    const u = account();
    const c = clients[0];
    const slot = async (k: string) => Number(await c.call('CLUSTER', 'KEYSLOT', k));
    expect(await slot(accountKey(u, 'rpm'))).toBe(await slot(accountKey(u, 'bal:res')));
    expect(await slot(accountKey(u, 'k:abc:rpm'))).toBe(await slot(accountKey(u, 'deny')));
  });

  it('60 per minute across two instances: the 60th admitted, the 61st refused with the real wait', async () => {
    const u = account();
    const rules: Rule[] = [global, { kind: 'window', key: accountKey(u, 'rpm'), limit: 60, windowMs: 60_000, label: 'rpm', requests: true }];
    const results = await Promise.all(Array.from({ length: 61 }, (_, i) => admit(i % 2 ? a : b, rules)));
    expect(results.filter((r) => r.ok)).toHaveLength(60);
    const refused = results.find((r) => !r.ok)!;
    expect(refused.ok === false && refused.reason === 'limit' && refused.retryAfterMs).toBeGreaterThan(55_000);
    expect(await clients[0].hget(accountKey(u, 'rpm'), 'n')).toBe('60');
  });

  it('concurrency 2 of 10 across two instances; release frees a slot', async () => {
    const u = account();
    const conc: Rule = { kind: 'concurrency', key: accountKey(u, 'conc'), limit: 2, label: 'conc' };
    const ids = Array.from({ length: 10 }, () => randomUUID());
    const results = await Promise.all(ids.map((leaseId, i) => (i % 2 ? a : b).admit({ rules: [global, conc], leaseId, leaseTtlMs: 60_000 })));
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    const held = ids.filter((_, i) => results[i].ok);
    await a.release({ leaseId: held[0], concurrencyKeys: [conc.key] });
    expect((await admit(b, [global, conc])).ok).toBe(true);
    expect((await admit(a, [global, conc])).ok).toBe(false);
  });

  it("a model's cap is shared across accounts; a refusal there undoes the account's part", async () => {
    const model = `m-${randomUUID()}`;
    const cap: Rule = { kind: 'window', key: modelKey(model, 'rpm'), limit: 5, windowMs: 60_000, label: 'model rpm' };
    const mconc: Rule = { kind: 'concurrency', key: modelKey(model, 'conc'), limit: 100, label: 'model conc' };
    const users = Array.from({ length: 4 }, account);
    const rulesOf = (u: string): Rule[] => [
      global,
      { kind: 'window', key: accountKey(u, 'rpm'), limit: 100, windowMs: 60_000, label: 'rpm', requests: true },
      { kind: 'concurrency', key: accountKey(u, 'conc'), limit: 100, label: 'conc' },
      cap,
      mconc,
    ];
    for (const u of users) await a.initBalance(accountKey(u, 'bal'), 1_000n);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => admit(i % 2 ? a : b, rulesOf(users[i % 4]), { reserve: { key: accountKey(users[i % 4], 'bal'), amount: 10n } })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(5);
    const refused = results.find((r) => !r.ok)!;
    expect(refused.ok === false && refused.reason === 'limit' && refused.rule.key).toBe(cap.key);
    // Only the admitted requests are counted, leased and reserved on the accounts' slots.
    let counted = 0;
    let leases = 0;
    let spent = 0n;
    for (const u of users) {
      counted += Number((await clients[0].hget(accountKey(u, 'rpm'), 'n')) ?? 0);
      leases += await clients[0].zcard(accountKey(u, 'conc'));
      spent += 1_000n - BigInt((await clients[0].get(accountKey(u, 'bal')))!);
    }
    expect(counted).toBe(5);
    expect(leases).toBe(5);
    expect(spent).toBe(50n);
    expect(await clients[0].zcard(mconc.key)).toBe(5);
  });

  it("tokens per minute of a key (account slot) and a model (its slot) across two instances: never more reserved than the limit; a refusal on one slot takes the other's tokens back; settled in its bucket", async () => {
    const model = `m-${randomUUID()}`;
    const mtpm: Rule = { kind: 'tokens', key: modelKey(model, 'tpm'), limit: 5_000, windowMs: 60_000, label: 'model tpm' };
    const users = Array.from({ length: 4 }, account);
    const rulesOf = (u: string): Rule[] => [
      global,
      { kind: 'tokens', key: accountKey(u, 'k:x:tpm'), limit: 100_000, windowMs: 60_000, label: 'key tpm' },
      mtpm,
    ];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => admit(i % 2 ? a : b, rulesOf(users[i % 4]), { tokens: 1_000 })));
    expect(results.filter((r) => r.ok)).toHaveLength(5);
    const refused = results.find((r) => !r.ok)!;
    expect(refused.ok === false && refused.reason === 'limit' && refused.rule.key).toBe(mtpm.key);
    expect(await clients[0].hget(mtpm.key, 'n')).toBe('5000');
    // Only the admitted requests' tokens stay on the accounts' slots (the refused parts were taken back).
    let counted = 0;
    for (const u of users) counted += Number((await clients[0].hget(accountKey(u, 'k:x:tpm'), 'n')) ?? 0);
    expect(counted).toBe(5_000);
    // One admitted request used 200 of its 1,000: both slots get 800 back, in the bucket each counted it in.
    const i = results.findIndex((r) => r.ok);
    const ok = results[i] as Extract<AdmitResult, { ok: true }>;
    await b.release({
      leaseId: 'settle',
      concurrencyKeys: [],
      tokens: ok.states.filter((s) => s.rule.kind === 'tokens').map((s) => ({ key: s.rule.key, windowMs: 60_000, at: s.at!, delta: -800 })),
    });
    expect(await clients[0].hget(mtpm.key, 'n')).toBe('4200');
    expect((await admit(a, rulesOf(users[0]), { tokens: 800 })).ok).toBe(true);
    expect((await admit(b, rulesOf(users[1]), { tokens: 1 })).ok).toBe(false);
  });

  it("a channel's concurrency (its own slot) across two instances: exactly its cap", async () => {
    const channel = `c-${randomUUID()}`;
    const cap: Rule = { kind: 'concurrency', key: channelKey(channel, 'conc'), limit: 3, label: 'channel conc' };
    const ids = Array.from({ length: 12 }, () => randomUUID());
    const results = await Promise.all(ids.map((leaseId, i) => (i % 2 ? a : b).admit({ rules: [cap], leaseId, leaseTtlMs: 60_000 })));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    await a.release({ leaseId: ids[results.findIndex((r) => r.ok)], concurrencyKeys: [cap.key] });
    expect((await admit(b, [cap])).ok).toBe(true);
    expect((await admit(a, [cap])).ok).toBe(false);
    // What the console reads (read-only, each key on its own slot): the live leases and a tokens window.
    const tpm: Rule = { kind: 'tokens', key: channelKey(channel, 'tpm'), limit: 10_000, windowMs: 60_000, label: 'channel tpm' };
    expect((await admit(a, [tpm], { tokens: 1_234 })).ok).toBe(true);
    expect(await b.usage([cap, tpm])).toEqual([3, 1_234]);
  });

  it('deny markers in the account slot and in the key slot refuse before anything is counted', async () => {
    const u = account();
    const rpm: Rule = { kind: 'window', key: accountKey(u, 'rpm'), limit: 10, windowMs: 60_000, label: 'rpm' };
    const deny = [accountKey(u, 'deny'), `gw:{k:${u}}:deny`];
    expect((await admit(a, [global, rpm], { denyKeys: deny })).ok).toBe(true);
    await clients[0].set(deny[1], '1');
    expect(await admit(a, [global, rpm], { denyKeys: deny })).toEqual({ ok: false, reason: 'denied', index: 1 });
    await clients[0].set(deny[0], '1');
    expect(await admit(b, [global, rpm], { denyKeys: deny })).toEqual({ ok: false, reason: 'denied', index: 0 });
    expect(await a.denied(deny)).toBe(0);
    expect(await clients[0].hget(rpm.key, 'n')).toBe('1');
  });

  it('a primary killed mid-load: no call throws, nothing is over-admitted, the limits hold after the failover', async () => {
    const u = account();
    const rpm: Rule = { kind: 'window', key: accountKey(u, 'rpm'), limit: 400, windowMs: 60_000, label: 'rpm', requests: true };
    const conc: Rule = { kind: 'concurrency', key: accountKey(u, 'conc'), limit: 1_000, label: 'conc' };
    const logs: string[] = [];
    const fa = FailoverLimiter.fromClusterNodes(cluster.nodes, { log: (e) => logs.push(e.msg) });
    const fb = FailoverLimiter.fromClusterNodes(cluster.nodes, { log: (e) => logs.push(e.msg) });
    try {
      const victim = await cluster.primaryOf(rpm.key);
      let admitted = 0;
      let refused = 0;
      const drive = async (limiter: Limiter, rounds: number) => {
        for (let i = 0; i < rounds; i++) {
          const batch = await Promise.all(Array.from({ length: 10 }, () => admit(limiter, [global, rpm, conc])));
          for (const r of batch) {
            if (r.ok) admitted++;
            else refused++;
          }
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      const load = Promise.all([drive(fa, 60), drive(fb, 60)]);
      await new Promise((r) => setTimeout(r, 100));
      await cluster.kill(victim);
      const admittedAtKill = admitted;
      await load; // no call rejects: FailoverLimiter answers a refusal while the slot has no primary
      await cluster.waitHealthy();
      // The servers agree before the clients do: each limiter comes back on Redis at its next probe
      // and its client learns the new primary of the slot at its next slot refresh. Wait until both
      // answer from Redis, on a key of the account's slot that no rule below counts.
      const probe: Rule = { kind: 'window', key: accountKey(u, 'probe'), limit: 1_000_000, windowMs: 60_000, label: 'probe' };
      const deadline = Date.now() + 20_000;
      for (let streak = 0; streak < 3;) {
        const answers = await Promise.all([admit(fa, [probe]), admit(fb, [probe])]);
        streak = answers.every((r) => r.ok) ? streak + 1 : 0;
        if (Date.now() > deadline) throw new Error('the limiters did not return to the Redis Cluster within 20 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(admitted + refused).toBe(1_200);
      expect(admitted).toBeLessThanOrEqual(400);
      // The promoted replica holds what had been replicated when the primary died (asynchronous
      // replication: writes of the last instant may be lost, and those admissions counted again).
      // It may also hold more than was admitted: an admission the dying primary applied (and
      // replicated) whose reply never came back was answered as a refusal (counted, not served).
      const replicated = Number((await clients[0].hget(rpm.key, 'n')) ?? 0);
      expect(replicated).toBeLessThanOrEqual(400);
      // What the failover can lose is bounded by what the dead primary had admitted: on a busy
      // machine the replica may lag that whole stretch (a fixed bound failed with the other core
      // busy), but admissions after the failover are all on the new primary. The 20: one batch per
      // limiter in flight when the kill returned.
      expect(admitted - replicated).toBeLessThanOrEqual(admittedAtKill + 20);
      // From there on the window is exact again, on the new primary, across both instances.
      let after = 0;
      for (let round = 0; round < 10; round++) {
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => admit(i % 2 ? fa : fb, [global, rpm])));
        after += results.filter((r) => r.ok).length;
      }
      expect(after).toBe(400 - replicated);
      expect(await clients[0].hget(rpm.key, 'n')).toBe('400');
    } finally {
      await Promise.all([fa.close(), fb.close()]);
    }
  }, 60_000);
});
