// Reliability of the production gateway (`node dist/server.mjs`) against a misbehaving upstream:
// every fault of the fake upstream, with and without a healthy channel to fall back to, and the
// billing of each (DNS failure and connection refused included); no leaked sockets or concurrency
// slots after hundreds of faulty requests (10,000 in soak-faults.test.ts);
// client disconnects; a database outage under the request-log writer; graceful SIGTERM.
//
// Documented behaviour checked here (spec: "502 all upstream channels failed"; wire conventions:
// "errors after the first byte cannot change the status: send a data: {"error":…} chunk, then end"):
//   - a fault before anything reached the client (refused connection, first-byte timeout, 5xx, 429,
//     malformed JSON, a reply cut or stalled before its first chunk, a reply over the 32 MiB cap)
//     moves on to the next channel; with none left the client gets 502 all_channels_failed, and
//     nothing is charged;
//   - a fault after the first byte (stream cut, stalled or malformed mid-way) ends the 200 stream
//     with an error chunk and no [DONE]; what was generated is billed (estimated by our tokenizer);
//   - a stream without [DONE] but with its finish_reason is complete: the gateway ends it properly.
//
// The database outage is simulated with a TCP proxy between the gateway and PostgreSQL (the server
// is shared, so it is not restarted): the proxy drops every connection and refuses new ones, then
// comes back on the same port.

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { countTokens, startFakeUpstream, type Fault, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { getLimiter } from '@/lib/gateway/runtime';
import { PICO, pico } from '../support/money';

const decPico = (d: { toFixed(n: number): string }) => pico(d.toFixed(12));

type Cfg = Record<string, any>;

/** Short channel timeouts for speed, no circuit breaker interference, no model fallback. */
function config(urls: string[], timeouts: { first_byte_ms?: number; idle_ms?: number } = {}): Cfg {
  const c = testConfig({ openaiUrls: urls, overrides: { circuit_breaker: { failures: 100_000, cooldown_ms: 1000 } } }) as Cfg;
  for (const ch of c.channels) ch.timeouts = { connect_ms: 500, first_byte_ms: timeouts.first_byte_ms ?? 800, idle_ms: timeouts.idle_ms ?? 800 };
  // Room for the 300-request run: slots are checked in Redis, not by running into the limit.
  c.tiers.pro = { ...c.tiers.pro, rpm: 3000, rph: 30000, concurrency: 64, max_concurrency: 64 };
  c.models = c.models.map((m: Cfg) => (m.name === 'gpt-4o-mini' ? { ...m, fallback_models: [] } : m));
  return c;
}

let db: Awaited<ReturnType<typeof getDb>>;
let redis: Redis;
let bad: FakeUpstream; // faults are queued here
let good: FakeUpstream;
let slow: FakeUpstream;
let gwSingle: RunningGateway; // one channel: bad
let gwFallback: RunningGateway; // bad first (priority 10), then good (priority 9)
let gwSlow: RunningGateway;
let gwGood: RunningGateway; // one channel: good
const gateways: RunningGateway[] = [];
const fakes: FakeUpstream[] = [];

beforeAll(async () => {
  db = await getDb();
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  countTokens('warm up the fake upstream tokenizer');
  bad = await startFakeUpstream({ chunkDelayMs: 25 });
  good = await startFakeUpstream();
  slow = await startFakeUpstream({ chunkDelayMs: 100, reply: 'one two three four five six seven eight nine ten eleven twelve' });
  fakes.push(bad, good, slow);
  [gwSingle, gwFallback, gwSlow, gwGood] = await Promise.all([
    startGateway({ config: config([bad.url]) }),
    startGateway({ config: config([bad.url, good.url]) }),
    startGateway({ config: config([slow.url]) }),
    startGateway({ config: config([good.url]) }),
  ]);
  gateways.push(gwSingle, gwFallback, gwSlow, gwGood);
});

afterEach(() => {
  for (const f of fakes) f.reset();
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
  await Promise.all(fakes.map((f) => f.close()));
  redis?.disconnect();
  await getLimiter().close();
  await db?.$disconnect();
});

function chat(g: RunningGateway, apiKey: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'reliability' }], ...body }),
    signal,
  });
}

const streamBody = { stream: true, stream_options: { include_usage: true } };
const logRow = (id: string, ms = 10_000) => waitFor(() => db.requestLog.findFirst({ where: { id } }), ms);
const usageEntries = (id: string) => db.ledgerEntry.findMany({ where: { kind: 'usage', reference: id } });

/** The log row and ledger agree with the cost the client was told (or 0 and no entry). */
async function expectBilled(id: string, cost: bigint) {
  const row = await logRow(id);
  expect(decPico(row.costUsd)).toBe(cost);
  const entries = await usageEntries(id);
  if (cost === 0n) expect(entries).toHaveLength(0);
  else {
    expect(entries).toHaveLength(1);
    expect(decPico(entries[0].amountUsd)).toBe(-cost);
  }
  return row;
}

/** A fault before the first byte with no channel left: 502 all_channels_failed, nothing charged. */
async function expectFailedUnbilled(res: Response) {
  const text = await res.text();
  expect(res.status, text).toBe(502);
  expect(res.headers.get('content-type')).toContain('application/json');
  const body = JSON.parse(text) as { error: { code: string; type: string; message: string; param: unknown } };
  expect(body.error.code).toBe('all_channels_failed');
  expect(res.headers.get('x-should-retry')).not.toBe('false');
  expect(res.headers.get('x-service-cost-usd')).toBe('0');
  const row = await expectBilled(res.headers.get('x-request-id')!, 0n);
  expect(row.status).toBe(502);
  const attempts = row.attempts as { ok: boolean; error?: string }[];
  expect(attempts.length).toBeGreaterThan(0);
  expect(attempts.every((a) => !a.ok && a.error)).toBe(true);
  return row;
}

/** Served by the second channel after the first failed; billed once, exactly what the client was told. */
async function expectServedByFallback(res: Response, stream: boolean) {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get('x-service-provider')).toBe('openai-2');
  let cost: bigint;
  if (stream) {
    const lines = text.split('\n').filter((l) => l.startsWith('data: '));
    expect(lines.at(-1)).toBe('data: [DONE]');
    expect(text).not.toContain('"error"');
    cost = pico(/"cost_usd":([0-9.]+)/.exec(lines.at(-2)!)![1]);
  } else {
    cost = pico(res.headers.get('x-service-cost-usd')!);
    expect(/"cost_usd":([0-9.]+)/.exec(text)![1]).toBe(res.headers.get('x-service-cost-usd'));
  }
  expect(cost).toBeGreaterThan(0n);
  const row = await expectBilled(res.headers.get('x-request-id')!, cost);
  expect(row.status).toBe(200);
  expect(row.channel).toBe('openai-2');
  const attempts = row.attempts as { channel: string; ok: boolean; error?: string }[];
  expect(attempts.map((a) => [a.channel, a.ok])).toEqual([
    ['openai-1', false],
    ['openai-2', true],
  ]);
  return row;
}

/** A stream that broke after its first byte: 200, an error chunk, no [DONE]; the partial reply is billed. */
async function expectMidStreamError(res: Response) {
  const text = await res.text();
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  expect(text).toContain('data: {"error":');
  expect(text).not.toContain('[DONE]');
  const errLine = text.split('\n').find((l) => l.startsWith('data: {"error":'))!;
  const err = JSON.parse(errLine.slice(6)) as { error: { message: string; type: string; code: string; param: unknown } };
  expect(err.error).toMatchObject({ code: 'upstream_error' });
  expect(err.error).toHaveProperty('param');
  const row = await logRow(res.headers.get('x-request-id')!);
  expect(row.outcome).toBe('upstream_error');
  expect(row.tokensEstimated).toBe(true);
  const cost = decPico(row.costUsd);
  expect(cost).toBeGreaterThan(0n); // at least the prompt was consumed upstream
  await expectBilled(row.id, cost);
  return row;
}

// ---- every fault, with and without a channel to fall back to ------------------------------------

interface Case {
  name: string;
  fault: Fault;
  stream: boolean;
  /** What the client sees with a single channel; with a fallback channel 'fail' becomes 'fallback'. */
  single: 'fail' | 'midstream' | 'ok';
}

const cases: Case[] = [
  { name: 'connection dropped on request', fault: { type: 'refuse' }, stream: false, single: 'fail' },
  { name: 'connection dropped on request (stream)', fault: { type: 'refuse' }, stream: true, single: 'fail' },
  { name: 'first-byte timeout', fault: { type: 'hang' }, stream: false, single: 'fail' },
  { name: 'first-byte timeout (stream)', fault: { type: 'hang' }, stream: true, single: 'fail' },
  { name: '500', fault: { type: 'status', status: 500 }, stream: false, single: 'fail' },
  { name: '503 (stream)', fault: { type: 'status', status: 503 }, stream: true, single: 'fail' },
  { name: '429 with retry-after', fault: { type: 'status', status: 429, headers: { 'retry-after': '7' } }, stream: false, single: 'fail' },
  { name: 'malformed JSON', fault: { type: 'malformed' }, stream: false, single: 'fail' },
  { name: 'malformed JSON mid-stream', fault: { type: 'malformed' }, stream: true, single: 'midstream' },
  { name: 'body cut half-way', fault: { type: 'cut', afterChunks: 0 }, stream: false, single: 'fail' },
  { name: 'stream cut before the first chunk', fault: { type: 'cut', afterChunks: 0 }, stream: true, single: 'fail' },
  { name: 'stream cut mid-way', fault: { type: 'cut', afterChunks: 3 }, stream: true, single: 'midstream' },
  { name: 'body stalls (idle timeout)', fault: { type: 'stall', afterChunks: 0 }, stream: false, single: 'fail' },
  { name: 'stream stalls before the first chunk', fault: { type: 'stall', afterChunks: 0 }, stream: true, single: 'fail' },
  { name: 'stream stalls mid-way (idle timeout)', fault: { type: 'stall', afterChunks: 3 }, stream: true, single: 'midstream' },
  { name: 'reply over the 32 MiB cap', fault: { type: 'huge', bytes: 33 * 1024 * 1024 }, stream: false, single: 'fail' },
];

describe('upstream faults', () => {
  let single: TestAccount;
  let fallback: TestAccount;
  beforeAll(async () => {
    [single, fallback] = await Promise.all([createAccount({ tier: 'pro', balanceUsd: '5' }), createAccount({ tier: 'pro', balanceUsd: '5' })]);
  });

  for (const c of cases) {
    it(`${c.name}: single channel -> ${c.single === 'fail' ? '502, not billed' : 'error chunk after first byte, partial billed'}; with a second channel -> ${c.single === 'fail' ? 'served by it' : 'same'}`, async () => {
      bad.queue(c.fault);
      const r1 = await chat(gwSingle, single.apiKey, c.stream ? streamBody : {});
      if (c.single === 'fail') await expectFailedUnbilled(r1);
      else await expectMidStreamError(r1);

      bad.queue(c.fault);
      const r2 = await chat(gwFallback, fallback.apiKey, c.stream ? streamBody : {});
      if (c.single === 'fail') {
        const row = await expectServedByFallback(r2, c.stream);
        if (c.fault.type === 'hang' || c.fault.type === 'stall') expect((row.attempts as { error: string }[])[0].error).toMatch(/timed out/);
        if (c.fault.type === 'huge') expect((row.attempts as { error: string }[])[0].error).toBe(`upstream reply larger than ${32 * 1024 * 1024} bytes`);
      } else await expectMidStreamError(r2);
    });
  }

  it('a channel at a closed port (connection refused) falls back to the next channel', async () => {
    const closed = await freePort();
    const g = await startGateway({ config: config([`http://127.0.0.1:${closed}`, good.url]) });
    gateways.push(g);
    const res = await chat(g, fallback.apiKey, {});
    const row = await expectServedByFallback(res, false);
    expect((row.attempts as { error: string }[])[0].error).toMatch(/ECONNREFUSED|connection failed/);
    const s = await chat(g, fallback.apiKey, streamBody);
    await expectServedByFallback(s, true);
  });

  it('a channel whose host does not resolve (DNS failure) falls back to the next channel; with none left, 502', async () => {
    // openai-1 at a name that cannot resolve (.invalid is reserved, RFC 6761); openai-2 serves
    // gpt-4o-mini only, so deepseek-chat has nowhere to fall back to.
    const c = config(['http://no-such-host.invalid', good.url]);
    c.channels[1].models = ['gpt-4o-mini'];
    const g = await startGateway({ config: c });
    gateways.push(g);
    for (const body of [{}, streamBody]) {
      const res = await chat(g, fallback.apiKey, body);
      const row = await expectServedByFallback(res, body === streamBody);
      expect((row.attempts as { error: string }[])[0].error).toMatch(/ENOTFOUND|EAI_AGAIN/);
    }
    const failed = await chat(g, single.apiKey, { model: 'deepseek-chat' });
    const row = await expectFailedUnbilled(failed);
    expect((row.attempts as { channel: string; error: string }[]).map((a) => a.channel)).toEqual(['openai-1']);
    expect((row.attempts as { error: string }[])[0].error).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(g.output()).not.toContain('gateway handler crashed');
  });

  it('a stream without [DONE] is completed by the gateway and billed exactly', async () => {
    bad.queue({ type: 'no-done' });
    const res = await chat(gwSingle, single.apiKey, streamBody);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"error"');
    const usageLine = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .at(-1)!;
    const cost = pico(/"cost_usd":([0-9.]+)/.exec(usageLine)![1]);
    const row = await expectBilled(res.headers.get('x-request-id')!, cost);
    expect(row.tokensEstimated).toBe(false);
    expect(row.outcome).toBe('ok');
  });

  it('a reply without usage is billed by our tokenizer', async () => {
    bad.queue({ type: 'no-usage' }, { type: 'no-usage' });
    for (const body of [{}, streamBody]) {
      const res = await chat(gwSingle, single.apiKey, body);
      await res.text();
      expect(res.status).toBe(200);
      const row = await logRow(res.headers.get('x-request-id')!);
      expect(row.tokensEstimated).toBe(true);
      expect(row.promptTokens).toBeGreaterThan(0);
      expect(row.completionTokens).toBeGreaterThan(0);
      await expectBilled(row.id, decPico(row.costUsd));
      expect(decPico(row.costUsd)).toBeGreaterThan(0n);
    }
  });

  it('a 5 MB reply passes, streamed and not', async () => {
    const bytes = 5 * 1024 * 1024;
    bad.queue({ type: 'huge', bytes });
    const res = await chat(gwSingle, single.apiKey, {});
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    // On a failure, the answer and the attempts say which part refused it.
    const why =
      res.status === 200 ? '' : `${JSON.stringify(body).slice(0, 300)} attempts ${JSON.stringify((await logRow(res.headers.get('x-request-id')!)).attempts)}`;
    expect(res.status, why).toBe(200);
    expect(body.choices[0].message.content.length).toBe(bytes);
    await expectBilled(res.headers.get('x-request-id')!, pico(res.headers.get('x-service-cost-usd')!));

    // Streamed through the fake without a chunk delay (320 chunks of 16 KiB).
    good.queue({ type: 'huge', bytes });
    const s = await chat(gwGood, single.apiKey, streamBody);
    const text = await s.text();
    expect(s.status).toBe(200);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const content = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => (JSON.parse(l.slice(6)) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '')
      .join('');
    expect(content.length).toBe(bytes);
    // Its row is written after the stream ended: the balance check below must see it.
    await logRow(s.headers.get('x-request-id')!);
  });

  it('the balance of each account moved by exactly the sum of its logged costs', async () => {
    for (const acct of [single, fallback]) {
      const rows = await db.requestLog.findMany({ where: { userId: acct.userId } });
      const total = rows.reduce((s, r) => s + decPico(r.costUsd), 0n);
      expect(pico(await balanceOf(acct.userId))).toBe(5n * PICO - total);
    }
  });
});

// ---- no leaked sockets or slots ------------------------------------------------------------------

describe('after 300 faulty requests', () => {
  it('no concurrency slot leaked, upstream sockets bounded, a free account still gets 2 parallel 200s', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '20' });
    // Seeded PRNG (mulberry32): the same mix every run.
    let seed = 0x5eed1234;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const mix: Fault[] = [
      { type: 'ok' },
      { type: 'refuse' },
      { type: 'hang' },
      { type: 'status', status: 500 },
      { type: 'status', status: 429, headers: { 'retry-after': '3' } },
      { type: 'malformed' },
      { type: 'cut', afterChunks: 0 },
      { type: 'cut', afterChunks: 2 },
      { type: 'stall', afterChunks: 0 },
      { type: 'stall', afterChunks: 2 },
      { type: 'no-done' },
      { type: 'no-usage' },
    ];
    const N = 300;
    const plan = Array.from({ length: N }, () => ({ fault: mix[Math.floor(rand() * mix.length)], stream: rand() < 0.5, fallback: rand() < 0.5 }));
    // Each request consumes exactly one fault of `bad` (its first and only try there).
    bad.queue(...plan.map((p) => p.fault));
    const rss = (g: RunningGateway) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${g.process.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const rssBefore = [gwSingle, gwFallback].map(rss);
    const statuses = new Map<number, number>();
    const ids: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < N) {
        const p = plan[next++];
        const res = await chat(p.fallback ? gwFallback : gwSingle, acct.apiKey, p.stream ? streamBody : {});
        await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        ids.push(res.headers.get('x-request-id')!);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await waitFor(async () => (await db.requestLog.count({ where: { id: { in: ids } } })) === N, 15_000);
    // Memory is only reported here (RSS in MiB, before and after): the bench covers 10k requests.
    console.log(
      `gateway RSS MiB before/after ${N} faulty requests:`,
      JSON.stringify(rssBefore.map(Math.round)),
      JSON.stringify([gwSingle, gwFallback].map(rss).map(Math.round)),
    );
    const leaseKeys = [`gw:{u:${acct.userId}}:conc`, 'gw:{m:gpt-4o-mini}:conc'];
    // KNOWN ISSUE (lib/limits/failover-limiter.ts, not ours to change): when a Redis call times out
    // (100-150 ms; it happens on an overloaded machine), the limiter switches to its in-process
    // fallback, and the release of a lease that Redis admitted then goes to memory: the Redis
    // lease (and its balance reservation) stays until the lease TTL (120 s). Strict checks apply
    // when that did not happen during the run; otherwise only the self-healing bound is checked.
    const failover = [gwSingle, gwFallback].some((g) => g.output().includes('limiter falling back to in-process'));
    if (!failover) {
      expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining([200, 502]));
      expect(
        [...statuses.keys()].every((s) => s === 200 || s === 502),
        JSON.stringify([...statuses]),
      ).toBe(true);
      // Every lease was released: the account's and the model's concurrency sets are empty.
      for (const key of leaseKeys) expect(await redis.zcard(key), key).toBe(0);
    } else {
      console.warn(
        `limiter fell back to in-process during the run (Redis timeouts): statuses ${JSON.stringify([...statuses])}, leases left ${await redis.zcard(leaseKeys[0])}`,
      );
      expect(statuses.get(500) ?? 0).toBe(0);
      for (const key of leaseKeys) {
        const ttl = await redis.pttl(key);
        expect(ttl === -2 || (ttl > 0 && ttl <= 240_000), `${key} ttl ${ttl}`).toBe(true);
      }
    }
    // Idle keep-alive sockets only: at most a handful per gateway and channel.
    expect(bad.openConnections()).toBeLessThanOrEqual(24);
    expect(good.openConnections()).toBeLessThanOrEqual(24);

    // Money: every charge is in the ledger once, and the balance moved by exactly their sum.
    const rows = await db.requestLog.findMany({ where: { id: { in: ids } } });
    const total = rows.reduce((s, r) => s + decPico(r.costUsd), 0n);
    const ledger = await db.ledgerEntry.findMany({ where: { userId: acct.userId, kind: 'usage' } });
    expect(ledger.reduce((s, e) => s + decPico(e.amountUsd), 0n)).toBe(-total);
    expect(ledger.length).toBe(rows.filter((r) => decPico(r.costUsd) > 0n).length);
    expect(pico(await balanceOf(acct.userId))).toBe(20n * PICO - total);
    // Charged: what was served, and streams broken after their first byte (logged 200 with outcome upstream_error).
    const charged = rows.filter((r) => decPico(r.costUsd) > 0n);
    expect(charged.every((r) => r.status === 200 || r.outcome === 'upstream_error')).toBe(true);
    expect(rows.filter((r) => r.outcome !== 'upstream_error' && r.status === 502).every((r) => decPico(r.costUsd) === 0n)).toBe(true);

    const free = await createAccount({ tier: 'free', balanceUsd: '1' });
    bad.reset(); // every planned fault was consumed; start clean anyway
    bad.setDefault({ type: 'delay', ms: 400 });
    try {
      const both = await Promise.all([chat(gwFallback, free.apiKey, {}), chat(gwFallback, free.apiKey, {})]);
      expect(both.map((r) => r.status)).toEqual([200, 200]);
      // ...and a third at the same time would have been over the free tier's 2.
      const three = await Promise.all([chat(gwFallback, free.apiKey, {}), chat(gwFallback, free.apiKey, {}), chat(gwFallback, free.apiKey, {})]);
      expect(three.map((r) => r.status).sort()).toEqual([200, 200, 429]);
    } finally {
      bad.setDefault({ type: 'ok' });
    }
  });
});

// ---- client disconnects ----------------------------------------------------------------------

describe('client disconnects', () => {
  it('mid-request (upstream not answered yet): slot released, logged client_closed, nothing billed', async () => {
    const free = await createAccount({ tier: 'free', balanceUsd: '1' });
    bad.setDefault({ type: 'hang' });
    const ids: string[] = [];
    try {
      await Promise.all(
        [0, 1].map(async () => {
          const controller = new AbortController();
          setTimeout(() => controller.abort(), 300);
          await expect(chat(gwSingle, free.apiKey, {}, controller.signal)).rejects.toThrow();
        }),
      );
    } finally {
      bad.setDefault({ type: 'ok' });
    }
    const rows = await waitFor(async () => {
      const r = await db.requestLog.findMany({ where: { userId: free.userId } });
      return r.length === 2 ? r : null;
    });
    for (const row of rows) {
      expect(row.outcome).toBe('client_closed');
      expect(row.status).toBe(499);
      ids.push(row.id);
      await expectBilled(row.id, 0n);
    }
    expect(await redis.zcard(`gw:{u:${free.userId}}:conc`)).toBe(0);
    const both = await Promise.all([chat(gwSingle, free.apiKey, {}), chat(gwSingle, free.apiKey, {})]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    await Promise.all(both.map((r) => r.text()));
    await waitFor(async () => (await balanceOf(free.userId)) !== '1.000000000000'); // the two 200s were billed
  });

  it('mid-stream: slot released once the upstream is drained, logged client_closed, generated tokens billed', async () => {
    const free = await createAccount({ tier: 'free', balanceUsd: '1' });
    const ids = await Promise.all(
      [0, 1].map(async () => {
        const controller = new AbortController();
        const res = await chat(gwSlow, free.apiKey, { stream: true }, controller.signal);
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        let seen = '';
        while ((seen.match(/"content"/g) ?? []).length < 2) {
          const { value, done } = await reader.read();
          if (done) break;
          seen += new TextDecoder().decode(value);
        }
        controller.abort();
        await reader.cancel().catch(() => undefined);
        return res.headers.get('x-request-id')!;
      }),
    );
    for (const id of ids) {
      const row = await logRow(id, 20_000);
      expect(row.outcome).toBe('client_closed');
      expect(row.status).toBe(499);
      const cost = decPico(row.costUsd);
      expect(cost).toBeGreaterThan(0n);
      expect(row.completionTokens).toBeGreaterThanOrEqual(2);
      await expectBilled(id, cost);
    }
    expect(await redis.zcard(`gw:{u:${free.userId}}:conc`)).toBe(0);
    const both = await Promise.all([chat(gwSlow, free.apiKey, {}), chat(gwSlow, free.apiKey, {})]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
  });
});

// ---- database outage under the log writer --------------------------------------------------------

/** A TCP proxy to PostgreSQL that can drop every connection and refuse new ones, then come back. */
async function pgProxy(target: URL) {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const up = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await up();
  return { port, up, down };
}

describe('database outage', () => {
  it('requests keep being served until the log queue is full, then get 503; the log writer retries and writes every row exactly once when the database is back', async () => {
    const target = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test');
    const proxy = await pgProxy(target);
    const viaProxy = new URL(target.toString());
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    // A queue of 8 rows: full after 8 requests of the outage.
    const g = await startGateway({
      config: config([good.url]),
      env: { DATABASE_URL: viaProxy.toString(), LOG_QUEUE_MAX: '8', METRICS_TOKEN: 'metrics-token-1' },
    });
    gateways.push(g);
    try {
      const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
      // Warm: the key is cached in the gateway and the live balance is loaded in Redis (a balance
      // that is not would need the database to be admitted).
      for (let i = 0; i < 5 && !(await redis.exists(`gw:{u:${acct.userId}}:bal`)); i++) {
        const first = await chat(g, acct.apiKey, {});
        expect(first.status).toBe(200);
        await expectBilled(first.headers.get('x-request-id')!, pico(first.headers.get('x-service-cost-usd')!));
      }
      expect(await redis.exists(`gw:{u:${acct.userId}}:bal`)).toBe(1);

      await proxy.down();
      const ids: string[] = [];
      let total = 0n;
      for (let i = 0; i < 5; i++) {
        const res = await chat(g, acct.apiKey, { messages: [{ role: 'user', content: `during the outage ${i}` }] });
        await res.text();
        expect(res.status).toBe(200);
        ids.push(res.headers.get('x-request-id')!);
        total += pico(res.headers.get('x-service-cost-usd')!);
      }
      await waitFor(async () => g.output().includes('request log batch not written; will retry'), 10_000);
      expect(await db.requestLog.count({ where: { id: { in: ids } } })).toBe(0);
      // At the queue's bound a request is refused, not served unbilled (and the refusal queues no row).
      for (let i = 0; i < 3; i++) {
        const res = await chat(g, acct.apiKey, { messages: [{ role: 'user', content: `filling the queue ${i}` }] });
        await res.text();
        expect(res.status).toBe(200);
        ids.push(res.headers.get('x-request-id')!);
        total += pico(res.headers.get('x-service-cost-usd')!);
      }
      // A row is queued just after its response: wait for the eighth.
      await waitFor(async () => {
        const text = await (await fetch(`${g.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-1' } })).text();
        return /^gateway_log_queue_length 8$/m.test(text);
      }, 10_000);
      for (let i = 0; i < 3; i++) {
        const shed = await chat(g, acct.apiKey, {});
        expect(shed.status).toBe(503);
        expect(shed.headers.get('retry-after')).toBeTruthy();
        expect(((await shed.json()) as { error: { code: string } }).error.code).toBe('unavailable');
      }
      const before = pico(await balanceOf(acct.userId));

      await proxy.up();
      await waitFor(async () => (await db.requestLog.count({ where: { id: { in: ids } } })) === 8, 40_000);
      await new Promise((r) => setTimeout(r, 500));
      for (const id of ids) {
        const row = await logRow(id);
        await expectBilled(id, decPico(row.costUsd));
      }
      expect(pico(await balanceOf(acct.userId))).toBe(before - total);
      // The gateway survived the outage, and serves again once its queue is written.
      expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
      expect((await chat(g, acct.apiKey, {})).status).toBe(200);
      expect(g.output()).not.toContain('gateway handler crashed');
      expect(g.process.exitCode).toBeNull();
    } finally {
      await proxy.up().catch(() => undefined);
    }
  }, 60_000);
});

// ---- a burst of connections -----------------------------------------------------------------------

describe('a burst of connections', () => {
  it('1,000 clients connecting while the instance is busy are all queued by the kernel and answered (none waits for a SYN retransmit)', async () => {
    const g = await startGateway({ config: config([good.url]) });
    gateways.push(g);
    const N = 1000;
    const sockets: net.Socket[] = [];
    // A stopped process stands for a busy event loop: nothing is accepted until it runs again, so
    // every connection must wait in the listening socket's queue. Node's default queue (511) would
    // leave the rest to the client's SYN retransmit, 1 s later at the earliest.
    g.process.kill('SIGSTOP');
    try {
      let connected = 0;
      for (let i = 0; i < N; i++) {
        const s = net.connect(g.port, '127.0.0.1');
        s.once('connect', () => connected++);
        s.on('error', () => undefined);
        sockets.push(s);
      }
      // While the process is stopped its queue never drains, so a SYN dropped once is dropped again
      // on every retransmit: all N connected here means all N were queued on their first SYN. The
      // deadline only bounds a failing run (with 511 it ends at 512 connected).
      const deadline = Date.now() + 5000;
      while (connected < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(connected).toBe(N);
    } finally {
      g.process.kill('SIGCONT');
    }
    const replies = await Promise.all(
      sockets.map(
        (s) =>
          new Promise<string>((resolve) => {
            let text = '';
            s.setEncoding('utf8');
            s.on('data', (d: string) => (text += d));
            s.once('close', () => resolve(text));
            s.end('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
          }),
      ),
    );
    expect(replies.filter((r) => r.startsWith('HTTP/1.1 200')).length).toBe(N);
  }, 60_000);
});

// ---- graceful shutdown ---------------------------------------------------------------------------

describe('SIGTERM', () => {
  /** A gateway with one slow stream open, its first chunk read. */
  async function streamInFlight(mode: 'lean' | 'next') {
    const g = await startGateway({ config: config([slow.url]), mode });
    gateways.push(g);
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const res = await chat(g, acct.apiKey, { stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    return { g, acct, res, reader, first };
  }

  it('a stream in flight finishes within the grace period, new connections are refused, exit code 0', async () => {
    const { g, res, reader, first } = await streamInFlight('lean');
    let text = first;

    const exited = g.stop('SIGTERM');
    // The listener closes at once: a new connection is refused while the stream goes on.
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(g.port, '127.0.0.1');
          s.once('connect', () => {
            s.destroy();
            resolve(false);
          });
          s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
        }),
      3000,
    );
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"error"');
    expect(await exited).toBe(0);
    const row = await logRow(res.headers.get('x-request-id')!);
    expect(row.status).toBe(200);
    expect(row.outcome).toBe('ok');
  });
  it('next start (route handlers): a stream in flight finishes, new /v1 requests get 503, logs flushed, exit code 0', async () => {
    const { g, acct, res, reader, first } = await streamInFlight('next');
    let text = first;

    const exited = g.stop('SIGTERM');
    // Next keeps its listener; the gateway itself refuses new work while it drains.
    await waitFor(async () => (await chat(g, acct.apiKey, {}).catch(() => null))?.status === 503, 3000);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await exited).toBe(0);
    const row = await logRow(res.headers.get('x-request-id')!);
    expect(row.status).toBe(200);
    expect(row.outcome).toBe('ok');
  });
});
