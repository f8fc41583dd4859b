// Speculative dispatch (lib/gateway/admission/speculation.ts): when an account's previous admission left ample
// room, the upstream call goes out while the admission is still on its way to Redis. These tests
// check what a client sees: the same limits and refusals as without it, nothing billed for a
// refused request, the cancelled upstream call not waited for, no speculation near a limit, and
// by default none for non-streaming requests on a busy instance.
// "Another instance used the room" is simulated by changing the account's Redis state directly.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor } from '../support/accounts';
import { getDb } from '@/lib/db';
import { getLimiter } from '@/lib/limits/runtime';

const METRICS_TOKEN = 'speculation-metrics-token';
let up: FakeUpstream;
let gw: RunningGateway;
let gwOff: RunningGateway;
/** The default setting (auto): streams speculate, and every request while the instance is quiet. */
let gwDefault: RunningGateway;
let gwStreams: RunningGateway;
let redis: Redis;
let db: Awaited<ReturnType<typeof getDb>>;

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'deepseek-chat', messages: [{ role: 'user', content: 'Hi' }], ...extra });

function chat(g: RunningGateway, apiKey: string, body: unknown = chatBody()): Promise<Response> {
  return fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
}

/** A counter from the gateway's /metrics (0 when the series does not exist yet). */
async function counter(g: RunningGateway, series: string): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const SPECULATIVE = 'gateway_speculative_admissions_total';
const URGENT_ADMITS = 'gateway_limiter_urgent_total{call="admit"}';
const URGENT_RELEASES = 'gateway_limiter_urgent_total{call="release"}';

/**
 * `n` calls of the account kept in progress (the upstream holds them 1.5 s), returned once all of
 * them reached the upstream; the upstream answers the calls after them at once.
 */
async function holdInProgress(g: RunningGateway, apiKey: string, n: number): Promise<Promise<Response>[]> {
  const seen = up.requests.length;
  up.setDefault({ type: 'delay', ms: 1500 });
  const held = Array.from({ length: n }, () => chat(g, apiKey));
  await waitFor(async () => up.requests.length >= seen + n);
  up.setDefault({ type: 'ok' });
  return held;
}

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  db = await getDb();
  up = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [up.url] });
  [gw, gwOff, gwDefault, gwStreams] = await Promise.all([
    startGateway({ config, env: { METRICS_TOKEN, SPECULATIVE_ADMISSION: 'all' } }),
    startGateway({ config, env: { METRICS_TOKEN, SPECULATIVE_ADMISSION: '0' } }),
    startGateway({ config, env: { METRICS_TOKEN } }),
    startGateway({ config, env: { METRICS_TOKEN, SPECULATIVE_ADMISSION: 'streams' } }),
  ]);
});

afterAll(async () => {
  await Promise.all([gw?.stop(), gwOff?.stop(), gwDefault?.stop(), gwStreams?.stop()]);
  await up?.close();
  redis?.disconnect();
  await getLimiter().close();
  await db?.$disconnect();
});

beforeEach(() => up.reset());

describe('speculative dispatch', () => {
  it('with room on every limit the upstream is called without waiting, and the limit counts stay exact', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const before = await counter(gw, SPECULATIVE);
    for (let i = 1; i <= 5; i++) {
      const res = await chat(gw, acct.apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining-requests')).toBe(String(300 - i));
      await res.arrayBuffer();
    }
    // The first request had no reading of the account's room yet; the next four went out at once.
    expect((await counter(gw, SPECULATIVE)) - before).toBe(4);
    expect(up.requests).toHaveLength(5);
  });

  it('a balance spent elsewhere in the meantime: 402, the upstream call cancelled without waiting for it, nothing billed', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    expect((await chat(gw, acct.apiKey)).status).toBe(200);
    const refusedBefore = await counter(gw, 'gateway_speculation_refused_total{code="insufficient_balance"}');
    // Another instance spends the whole balance; this instance's reading still shows $10.
    await redis.set(`gw:{u:${acct.userId}}:bal`, '0');
    up.setDefault({ type: 'delay', ms: 5000 });
    const t = Date.now();
    const res = await chat(gw, acct.apiKey);
    const elapsed = Date.now() - t;
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error.code).toBe('insufficient_balance');
    expect(body.error.message).toContain('Insufficient balance');
    expect(res.headers.get('x-should-retry')).toBe('false');
    // The call went upstream before the refusal, and the refusal did not wait for its 5 s reply.
    // (Counted on arrival: the cancelled call's connection may close before its body is read.)
    expect(up.received()).toBe(2);
    expect(elapsed).toBeLessThan(3000);
    expect((await counter(gw, 'gateway_speculation_refused_total{code="insufficient_balance"}')) - refusedBefore).toBe(1);

    const requestId = res.headers.get('x-request-id')!;
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId } }), 10_000);
    expect(row.status).toBe(402);
    expect(row.errorCode).toBe('insufficient_balance');
    expect(row.costUsd.toFixed(12)).toBe('0.000000000000');
    expect(row.attempts).toEqual([expect.objectContaining({ channel: 'openai-1', ok: false, error: 'cancelled: admission refused' })]);
    const charges = await db.ledgerEntry.count({ where: { userId: acct.userId, reference: requestId } });
    expect(charges).toBe(0);
  });

  it('a limit used up elsewhere in the meantime: 429 with Retry-After, as without speculation', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    expect((await chat(gw, acct.apiKey)).status).toBe(200);
    // Another instance admits the other 299 requests of this minute.
    // The window's state is a hash of sub-bucket counts (lib/limits): add them to the current bucket.
    const rpm = `gw:{u:${acct.userId}}:rpm`;
    const lo = await redis.hget(rpm, 'lo');
    expect(lo).not.toBeNull();
    await redis.hincrby(rpm, lo!, 299);
    await redis.hincrby(rpm, 'n', 299);
    up.setDefault({ type: 'delay', ms: 5000 });
    const t = Date.now();
    const res = await chat(gw, acct.apiKey);
    expect(res.status).toBe(429);
    expect(Date.now() - t).toBeLessThan(3000);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('tier pro: 300 requests per minute');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    // With the refusal known, the next request waits for its admission: not sent upstream at all.
    const next = await chat(gw, acct.apiKey);
    expect(next.status).toBe(429);
    expect(up.received()).toBe(2);
  });

  it('never near a limit: a balance under ten times the reservation, or the last concurrency slot, waits for admission', async () => {
    let before = await counter(gw, SPECULATIVE);
    // deepseek-chat reserves up to 4096 output tokens at $1.10 per million: about $0.0045.
    const poor = await createAccount({ tier: 'pro', balanceUsd: '0.02' });
    for (let i = 0; i < 3; i++) expect((await chat(gw, poor.apiKey)).status).toBe(200);
    expect((await counter(gw, SPECULATIVE)) - before).toBe(0);
    // Pro tier concurrency 8: with 7 slots held, the last one is inside the margin.
    const rich = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const held = await holdInProgress(gw, rich.apiKey, 7);
    before = await counter(gw, SPECULATIVE);
    const last = await chat(gw, rich.apiKey);
    expect(last.status).toBe(200);
    expect((await counter(gw, SPECULATIVE)) - before).toBe(0);
    for (const r of await Promise.all(held)) expect(r.status).toBe(200);
  });

  it('by default a quiet instance calls the upstream at once for every request, a busy one only for streams', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    let before = await counter(gwDefault, SPECULATIVE);
    for (let i = 0; i < 3; i++) {
      const res = await chat(gwDefault, acct.apiKey);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // The first request had no reading of the account's room yet.
    expect((await counter(gwDefault, SPECULATIVE)) - before).toBe(2);
    // Five requests in progress on this instance: busy. Pro tier allows 8 at once, so with the next
    // one the account still has room beyond the margin for one more (the stream below).
    const held = await holdInProgress(gwDefault, acct.apiKey, 5);
    before = await counter(gwDefault, SPECULATIVE);
    const plain = await chat(gwDefault, acct.apiKey);
    expect(plain.status).toBe(200);
    await plain.arrayBuffer();
    expect((await counter(gwDefault, SPECULATIVE)) - before).toBe(0);
    const stream = await chat(gwDefault, acct.apiKey, chatBody({ stream: true }));
    expect(stream.status).toBe(200);
    expect(await stream.text()).toMatch(/data: \[DONE\]\n\n$/);
    expect((await counter(gwDefault, SPECULATIVE)) - before).toBe(1);
    for (const r of await Promise.all(held)) expect(r.status).toBe(200);
  });

  it("a quiet instance sends a stream's admission and release to Redis at once, a busy one with the event-loop turn's batch", async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const urgent = async () => [await counter(gwDefault, URGENT_ADMITS), await counter(gwDefault, URGENT_RELEASES)];
    const stream = async () => {
      const res = await chat(gwDefault, acct.apiKey, chatBody({ stream: true }));
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/data: \[DONE\]\n\n$/);
    };
    let [admits, releases] = await urgent();
    // The first stream has no reading of the account's room: it waits for its admission, which
    // therefore goes with the batch; its release is sent at once.
    await stream();
    await stream();
    expect(await urgent()).toEqual([admits + 1, releases + 2]);
    const held = await holdInProgress(gwDefault, acct.apiKey, 5);
    [admits, releases] = await urgent();
    const speculated = await counter(gwDefault, SPECULATIVE);
    await stream();
    // Still speculative (streams always may be), but both of its limiter calls were batched.
    expect((await counter(gwDefault, SPECULATIVE)) - speculated).toBe(1);
    expect(await urgent()).toEqual([admits, releases]);
    for (const r of await Promise.all(held)) expect(r.status).toBe(200);
  });

  it('SPECULATIVE_ADMISSION=streams: only streams go out before their admission; a refused stream gets its 402 before any byte of it', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const before = await counter(gwStreams, SPECULATIVE);
    for (let i = 0; i < 3; i++) expect((await chat(gwStreams, acct.apiKey)).status).toBe(200);
    expect((await counter(gwStreams, SPECULATIVE)) - before).toBe(0);
    for (let i = 0; i < 3; i++) {
      const res = await chat(gwStreams, acct.apiKey, chatBody({ stream: true }));
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/data: \[DONE\]\n\n$/);
    }
    expect((await counter(gwStreams, SPECULATIVE)) - before).toBe(3);
    await redis.set(`gw:{u:${acct.userId}}:bal`, '0');
    const refused = await chat(gwStreams, acct.apiKey, chatBody({ stream: true }));
    expect(refused.status).toBe(402);
    expect(refused.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_balance');
    // The refused stream went out before its admission (the counter). Whether its request reached
    // the upstream before the refusal cancelled it is a race (a fast refusal can abort the call
    // before its connection is written or read); it was never retried on another channel.
    expect((await counter(gwStreams, SPECULATIVE)) - before).toBe(4);
    expect(up.received()).toBeGreaterThanOrEqual(6);
    expect(up.received()).toBeLessThanOrEqual(7);
  });

  it('SPECULATIVE_ADMISSION=0 always waits for the admission', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    for (let i = 0; i < 3; i++) expect((await chat(gwOff, acct.apiKey)).status).toBe(200);
    expect(await counter(gwOff, SPECULATIVE)).toBe(0);
    await redis.set(`gw:{u:${acct.userId}}:bal`, '0');
    expect((await chat(gwOff, acct.apiKey)).status).toBe(402);
    expect(up.requests).toHaveLength(3);
  });
});
