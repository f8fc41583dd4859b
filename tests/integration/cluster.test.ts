// Two gateway processes on a real Redis Cluster (three primaries, three replicas, started here;
// REDIS_CLUSTER_NODES instead of REDIS_URL): the exact boundaries hold across them (60/61 per
// minute, concurrency 2 of 10, a per-model cap shared across accounts), a revoked key is refused at
// once by the other instance (deny marker + pub/sub on the cluster), and a primary killed
// mid-load gives refusals for a moment, never a 500 and never an over-admission.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster';
import { createAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { revokeKey } from '@/lib/accounts/queries';
import { keyDenyKey } from '@/lib/events';
import { hashApiKey } from '@/lib/keys/api-key';
import { Cluster } from 'ioredis';

let cluster: TestCluster;
let up: FakeUpstream;
let gwA: RunningGateway;
let gwB: RunningGateway;
const MODEL_TPM = 3_000;

const chat = (gw: RunningGateway, apiKey: string, model = 'deepseek-chat') =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });

beforeAll(async () => {
  [cluster, up] = await Promise.all([startRedisCluster(), startFakeUpstream()]);
  const config = testConfig({ openaiUrls: [up.url] });
  // A small per-model cap, shared by every free and pro account.
  (config.models as { name: string; rpm?: number; tpm?: number }[]).find((m) => m.name === 'gpt-4o-mini')!.rpm = 7;
  // gpt-4o on a channel of its own with a concurrency cap, and a tokens-per-minute cap on the model.
  const channels = config.channels as { name: string; models: string[] }[];
  channels[0].models = channels[0].models.filter((m) => m !== 'gpt-4o');
  channels.push({ ...channels[0], name: 'capped', models: ['gpt-4o'], concurrency: 2 } as (typeof channels)[number]);
  (config.models as { name: string; tpm?: number }[]).find((m) => m.name === 'gpt-4o')!.tpm = MODEL_TPM;
  const env = { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.env };
  [gwA, gwB] = await Promise.all([startGateway({ config, env }), startGateway({ config, env })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([gwA?.stop(), gwB?.stop()]);
  await up?.close();
  await cluster?.stop();
  await (await getDb()).$disconnect();
});

beforeEach(() => up.reset());

describe('two gateways on a Redis Cluster', () => {
  it('free tier: the 60th request of the minute is admitted, the 61st refused, across both instances', async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) {
      const res = await chat(i % 2 === 0 ? gwA : gwB, acct.apiKey);
      statuses.push(res.status);
      if (i === 60) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(50);
        expect(((await res.json()) as { error: { message: string } }).error.message).toContain('tier free: 60 requests per minute');
      } else await res.arrayBuffer();
    }
    expect(
      statuses.slice(0, 60).every((s) => s === 200),
      gwA.output().slice(-2000),
    ).toBe(true);
    expect(statuses[60]).toBe(429);
  });

  it('concurrency: 10 at once against a cap of 2 admit exactly 2', async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    up.setDefault({ type: 'delay', ms: 1000 });
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await chat(i % 2 === 0 ? gwA : gwB, acct.apiKey);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    up.setDefault({ type: 'ok' });
  });

  it("a model's cap is shared across accounts; a refusal there counts nothing on the account", async () => {
    // Two requests per account: within each account's own limits (concurrency 2), so only the cap refuses.
    const accounts = await Promise.all(Array.from({ length: 6 }, () => createAccount({ balanceUsd: '10' })));
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await chat(i % 2 === 0 ? gwA : gwB, accounts[i % 6].apiKey, 'gpt-4o-mini');
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    expect(up.requests).toHaveLength(7);
    // Each account's own minute counts only its admitted requests (the refused ones were undone).
    const c = new Cluster(cluster.nodes);
    try {
      let counted = 0;
      for (const a of accounts) counted += Number((await c.hget(`gw:{u:${a.userId}}:rpm`, 'n')) ?? 0);
      expect(counted).toBe(7);
    } finally {
      c.disconnect();
    }
  });

  it("a channel's concurrency cap holds across both instances: 10 at once on a channel of 2 serve exactly 2, the rest a 429 naming it", async () => {
    const accounts = await Promise.all(Array.from({ length: 5 }, () => createAccount({ tier: 'pro', balanceUsd: '10' })));
    up.setDefault({ type: 'delay', ms: 1000 });
    const replies = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await fetch(`${(i % 2 === 0 ? gwA : gwB).url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${accounts[i % 5].apiKey}` },
          body: JSON.stringify({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
        });
        return { status: res.status, text: await res.text() };
      }),
    );
    up.setDefault({ type: 'ok' });
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(8);
    expect(refused[0].text).toContain('2 concurrent requests');
    expect(up.requests).toHaveLength(2);
  });

  it("a model's tokens per minute holds across both instances: the request that would cross it is refused, naming it", async () => {
    const accounts = await Promise.all(Array.from({ length: 3 }, () => createAccount({ tier: 'pro', balanceUsd: '10' })));
    const send = (gw: RunningGateway, i: number) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${accounts[i].apiKey}` },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: 1_400, messages: [{ role: 'user', content: 'Hi' }] }),
      });
    // Each reserves its prompt's bound and 1,400 output tokens: two of 3,000 fit at once, one on each instance.
    up.setDefault({ type: 'delay', ms: 1000 });
    const held = [send(gwA, 0), send(gwB, 1)];
    await new Promise((r) => setTimeout(r, 400));
    const third = await send(gwA, 2);
    const text = await third.text();
    expect(third.status, text).toBe(429);
    expect(text).toContain(`model gpt-4o: ${MODEL_TPM} tokens per minute`);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    up.setDefault({ type: 'ok' });
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    // Both settled to the few tokens they used (the releases follow the replies at once): the third fits now.
    await new Promise((r) => setTimeout(r, 500));
    expect((await send(gwB, 2)).status).toBe(200);
  });

  it('a revoked key is refused at once by the other instance', async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    expect((await chat(gwA, acct.apiKey)).status).toBe(200);
    expect((await chat(gwB, acct.apiKey)).status).toBe(200);
    // As the dashboard's revocation does on a gateway configured for the cluster: the database, the
    // deny marker, then the message (this test process itself is configured with REDIS_URL).
    await revokeKey(acct.userId, acct.keyId);
    const c = new Cluster(cluster.nodes);
    try {
      const hash = hashApiKey(acct.apiKey);
      await c.set(keyDenyKey(hash), '1', 'PX', 60_000);
      await c.publish('gw:events', JSON.stringify({ type: 'key-revoked', hash }));
    } finally {
      c.disconnect();
    }
    const [a, b] = await Promise.all([chat(gwA, acct.apiKey), chat(gwB, acct.apiKey)]);
    expect([a.status, b.status]).toEqual([401, 401]);
  });

  it('a primary killed mid-load: refusals while its slots fail over, never a 500, never over the limit', async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    const victim = await cluster.primaryOf(`gw:{u:${acct.userId}}:rpm`);
    const statuses: number[] = [];
    const drive = async (gw: RunningGateway, n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await chat(gw, acct.apiKey);
        await res.arrayBuffer();
        statuses.push(res.status);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all([drive(gwA, 50), drive(gwB, 50)]);
    await new Promise((r) => setTimeout(r, 300));
    await cluster.kill(victim);
    await load;
    await cluster.waitHealthy();
    expect(
      statuses.filter((s) => s !== 200 && s !== 429),
      JSON.stringify(statuses),
    ).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(60);
    // After the failover the instances are back on the cluster: the minute's limit still holds.
    let ok = statuses.filter((s) => s === 200).length;
    for (let i = 0; i < 70; i++) {
      const res = await chat(i % 2 ? gwA : gwB, acct.apiKey);
      await res.arrayBuffer();
      expect([200, 429]).toContain(res.status);
      if (res.status === 200) ok++;
    }
    expect(ok).toBeLessThanOrEqual(60 + 5); // + writes the dead primary had not replicated yet (asynchronous replication)
  }, 60_000);
});

describe('three instances, one truth', () => {
  it('SIGKILL one of three mid-load and restart it: every 200 has one log row and one ledger entry (the killed one: at most one), nothing overspent', async () => {
    const config = testConfig({ openaiUrls: [up.url] });
    const env = { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.env };
    let gwC = await startGateway({ config, env });
    const acct = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const served: { id: string; instance: 'A' | 'B' | 'C' | 'C2' }[] = [];
    const statuses: number[] = [];
    let killed = false;
    const drive = async (name: 'A' | 'B' | 'C', n: number) => {
      for (let i = 0; i < n; i++) {
        const gw = name === 'A' ? gwA : name === 'B' ? gwB : gwC;
        const instance = name === 'C' && killed ? 'C2' : name;
        let res: Response;
        try {
          res = await chat(gw, acct.apiKey);
          await res.arrayBuffer();
        } catch {
          // The killed instance's connections drop: the client saw no answer.
          if (name === 'C') await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        statuses.push(res.status);
        if (res.status === 200) served.push({ id: res.headers.get('x-request-id')!, instance });
      }
    };
    const load = Promise.all([drive('A', 60), drive('B', 60), drive('C', 60)]);
    await new Promise((r) => setTimeout(r, 400));
    await gwC.stop('SIGKILL');
    gwC = await startGateway({ config, env });
    killed = true;
    await load;
    try {
      expect(statuses.filter((st) => st !== 200 && st !== 429)).toEqual([]);
      expect(served.length).toBeLessThanOrEqual(300); // pro: 300 requests per minute
      const db = await getDb();
      const ids = served.map((x) => x.id);
      const count = async () => {
        const rows = await db.requestLog.groupBy({ by: ['id'], where: { id: { in: ids } }, _count: true });
        const ledger = await db.ledgerEntry.groupBy({ by: ['reference'], where: { reference: { in: ids }, kind: 'usage' }, _count: true });
        return { rows: new Map(rows.map((r) => [r.id, r._count])), ledger: new Map(ledger.map((l) => [l.reference!, l._count])) };
      };
      // The survivors' batches are written within LOG_FLUSH_MS.
      let got = await count();
      for (let i = 0; i < 50 && served.some((x) => x.instance !== 'C' && got.rows.get(x.id) !== 1); i++) {
        await new Promise((r) => setTimeout(r, 200));
        got = await count();
      }
      let lost = 0;
      for (const x of served) {
        const rows = got.rows.get(x.id) ?? 0;
        const entries = got.ledger.get(x.id) ?? 0;
        expect(entries, x.id).toBe(rows); // a row and its charge are one statement
        if (x.instance === 'C') {
          expect(rows).toBeLessThanOrEqual(1);
          if (rows === 0) lost++;
        } else expect(rows, `${x.instance} ${x.id}`).toBe(1);
      }
      // The crash-loss bound: only what the killed instance had queued (at most LOG_FLUSH_MS of its replies).
      expect(lost).toBeLessThanOrEqual(served.filter((x) => x.instance === 'C').length);
      const user = await db.user.findUniqueOrThrow({ where: { id: acct.userId } });
      expect(user.balanceUsd.isNegative()).toBe(false);
      const spent = await db.ledgerEntry.aggregate({ where: { userId: acct.userId, kind: 'usage' }, _sum: { amountUsd: true } });
      expect(user.balanceUsd.toFixed(12)).toBe(
        new (user.balanceUsd.constructor as new (v: string) => typeof user.balanceUsd)('5').plus(spent._sum.amountUsd ?? 0).toFixed(12),
      );
    } finally {
      await gwC.stop();
    }
  }, 90_000);
});
