// Hardening (issue 26): what a $0 account, a malicious upstream, a slow client or a shutdown can do
// to the built server (`node dist/server.mjs`), against the real PostgreSQL and Redis:
//   - poisoned input (NUL, lone surrogates, megabyte or header-illegal model names, fractional or
//     absurd upstream usage, a stream error cut mid-emoji) never stops the request-log writer: every
//     row lands (or is set aside) and every later row and charge is written;
//   - the tokenizer never holds the event loop: a 4 MiB one-word prompt to service-auto;
//   - request bodies trickled by a slow client are cut after REQUEST_TIMEOUT_MS, streams are not;
//   - upstream usage is never trusted to credit a balance or to charge beyond the reservation;
//   - an upstream 401/403 is the channel's failure: fallback, never the caller's 401;
//   - stream cost trailers arrive; requests refused before admission count against the rate;
//   - count_tokens is limited; a stream longer than the shutdown grace is logged and billed.
import http from 'node:http';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { getLimiter } from '@/lib/limits/runtime';
import { pico } from '../support/money';

type Cfg = Record<string, any>;
const decPico = (d: { toFixed(n: number): string }) => pico(d.toFixed(12));

/**
 * An upstream that says what the test tells it to: `next` is the reply to the next chat call
 * (JSON usage of any shape, a status, or an SSE stream written as given).
 */
interface Scripted {
  status?: number;
  usage?: unknown;
  sse?: string[];
}
const next: Scripted[] = [];
let scriptedCalls = 0;
function startScripted(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      scriptedCalls++;
      const s = next.shift() ?? {};
      if (s.status) {
        res.writeHead(s.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `scripted ${s.status}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
        return;
      }
      if (s.sse) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of s.sse) res.write(`data: ${e}\n\n`);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-scripted',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'scripted reply' }, finish_reason: 'stop' }],
          usage: s.usage === undefined ? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } : s.usage,
        }),
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

function config(openaiUrls: string[], anthropicUrls: string[] = []): Cfg {
  const c = testConfig({
    openaiUrls,
    anthropicUrls,
    overrides: { circuit_breaker: { failures: 100_000, cooldown_ms: 1000 }, clamp_output_to_budget: false },
  }) as Cfg;
  c.models = c.models.map((m: Cfg) => (m.name === 'gpt-4o-mini' ? { ...m, fallback_models: [] } : m));
  return c;
}

let db: Awaited<ReturnType<typeof getDb>>;
let redis: Redis;
let scripted: { url: string; close: () => Promise<void> };
let fake: FakeUpstream;
let slowFake: FakeUpstream;
let gw: RunningGateway; // one channel: the scripted upstream
let gwFake: RunningGateway; // the faithful fake (OpenAI and Anthropic)
const gateways: RunningGateway[] = [];

beforeAll(async () => {
  db = await getDb();
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  scripted = await startScripted();
  fake = await startFakeUpstream();
  slowFake = await startFakeUpstream({ chunkDelayMs: 150, reply: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen' });
  [gw, gwFake] = await Promise.all([
    startGateway({ config: config([scripted.url]), env: { REQUEST_TIMEOUT_MS: '2000' } }),
    startGateway({ config: config([fake.url], [fake.url]) }),
  ]);
  gateways.push(gw, gwFake);
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
  await scripted?.close();
  await fake?.close();
  await slowFake?.close();
  redis?.disconnect();
  await getLimiter().close();
  await db?.$disconnect();
});

function post(g: RunningGateway, apiKey: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${g.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
const chat = (g: RunningGateway, apiKey: string, body: Record<string, unknown> = {}) =>
  post(g, apiKey, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hardening' }], ...body });
const logRow = (id: string, ms = 15_000) => waitFor(() => db.requestLog.findFirst({ where: { id } }), ms);

/** Sum of logged costs equals what left the balance (the account started at `start`). */
async function expectLedgerConsistent(acct: TestAccount, start: string) {
  const rows = await db.requestLog.findMany({ where: { userId: acct.userId } });
  const spent = rows.reduce((s, r) => s + decPico(r.costUsd), 0n);
  expect(pico(await balanceOf(acct.userId))).toBe(pico(start) - spent);
}

describe('poisoned input never stops billing writes', () => {
  it('NUL, lone surrogates, fractional usage and an error cut mid-emoji: every row is written, later rows and charges too', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const ids: string[] = [];
    // A model name PostgreSQL cannot store as text (NUL), and one it cannot store in json (lone surrogate).
    for (const model of ['\u0000', '\ud800', 'gpt\u0000-4o']) {
      const res = await post(gw, acct.apiKey, '/v1/chat/completions', `{"model":${JSON.stringify(model)},"messages":[{"role":"user","content":"x"}]}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe('model');
      ids.push(res.headers.get('x-request-id')!);
    }
    // Fractional usage from the upstream: billed on whole tokens, no 500.
    next.push({ usage: { prompt_tokens: 1.5, completion_tokens: 2.4, total_tokens: 3.9 } });
    const frac = await chat(gw, acct.apiKey);
    expect(frac.status).toBe(200);
    ids.push(frac.headers.get('x-request-id')!);
    // A stream whose error message is cut by the gateway in the middle of an emoji (a lone surrogate in the attempt's error).
    const emoji = '😀'.repeat(150);
    next.push({
      sse: [
        JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' } }] }),
        JSON.stringify({ error: { message: `a${emoji}` } }),
      ],
    });
    const cut = await chat(gw, acct.apiKey, { stream: true });
    expect(cut.status).toBe(200);
    expect(await cut.text()).toContain('"error"');
    ids.push(cut.headers.get('x-request-id')!);
    // A normal request after them: its row and its charge land.
    const ok = await chat(gw, acct.apiKey);
    expect(ok.status).toBe(200);
    ids.push(ok.headers.get('x-request-id')!);
    for (const id of ids) await logRow(id);
    const fracRow = await logRow(frac.headers.get('x-request-id')!);
    expect([fracRow.promptTokens, fracRow.completionTokens]).toEqual([2, 2]);
    const okRow = await logRow(ok.headers.get('x-request-id')!);
    expect(decPico(okRow.costUsd)).toBe(pico(ok.headers.get('x-service-cost-usd')!));
    const entry = await waitFor(() => db.ledgerEntry.findFirst({ where: { reference: ok.headers.get('x-request-id')! } }));
    expect(decPico(entry.amountUsd)).toBe(-pico(ok.headers.get('x-service-cost-usd')!));
    await expectLedgerConsistent(acct, '5');
  });

  it('the writer isolates a row the database refuses: it is set aside, every other row of its batch lands', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const { enqueueLog, flushLogs } = await import('@/lib/billing/writer');
    const base = {
      createdAt: new Date(),
      apiKeyId: null,
      endpoint: '/v1/chat/completions',
      modelRequested: 'gpt-4o-mini',
      modelServed: 'gpt-4o-mini',
      channel: 'openai-1',
      attempts: [],
      status: 200,
      outcome: 'ok',
      stream: false,
      promptTokens: 1,
      completionTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      tokensEstimated: false,
      costCnyPico: 0n,
      cnyRate: '7.2',
      latencyMs: 1,
      firstTokenMs: 1,
      errorCode: null,
      routeReason: null,
    };
    const tag = `req_poison_${Date.now()}`;
    // A cost beyond the column's range (no charge can reach it: charges are capped at the
    // reservation): no form of this row can be stored.
    enqueueLog({ ...base, id: `${tag}_bad`, userId: acct.userId, costPico: 10n ** 30n });
    for (let i = 0; i < 20; i++)
      enqueueLog({ ...base, id: `${tag}_${i}`, userId: acct.userId, costPico: 1_000_000n, promptTokens: i === 3 ? 1e12 : 1, latencyMs: i === 4 ? -5 : 1 });
    await flushLogs();
    const written = await db.requestLog.count({ where: { id: { startsWith: `${tag}_` }, userId: acct.userId } });
    expect(written).toBe(20);
    const rejected = await db.requestLogRejected.findUnique({ where: { id: `${tag}_bad` } });
    expect(rejected?.error).toBeTruthy();
    expect(pico(await balanceOf(acct.userId))).toBe(pico('1') - 20n * 1_000_000n);
    const row3 = await db.requestLog.findFirstOrThrow({ where: { id: `${tag}_3` } });
    expect(row3.promptTokens).toBe(2_147_483_647);
  });
});

describe('model names', () => {
  it('a megabyte model name is refused at once, neither echoed in a header nor stored whole; header-illegal names get a JSON 400, not a 500', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const huge = 'm'.repeat(1024 * 1024);
    const res = await chat(gwFake, acct.apiKey, { model: huge });
    expect(res.status).toBe(400);
    expect((res.headers.get('x-service-model-id') ?? '').length).toBeLessThan(300);
    const row = await logRow(res.headers.get('x-request-id')!);
    expect((row.modelRequested ?? '').length).toBeLessThanOrEqual(64);
    for (const model of ['a\nb', 'caf\u00e9', 'x\ry']) {
      const r = await chat(gwFake, acct.apiKey, { model });
      expect(r.status, model).toBe(400);
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    }
  });

  it('requests refused before admission still count against the request rate', async () => {
    const acct = await createAccount({ tier: 'free' }); // 60 requests per minute in the test tiers
    const statuses: number[] = [];
    for (let i = 0; i < 62; i++) statuses.push((await chat(gwFake, acct.apiKey, { model: `no-such-model-${i}` })).status);
    expect(statuses.slice(0, 60).every((s) => s === 400)).toBe(true);
    expect(statuses.slice(60)).toEqual([429, 429]);
  });
});

describe('the tokenizer never holds the event loop', () => {
  it('a 4 MiB one-word prompt to service-auto does not delay /healthz by more than 50 ms beyond the machine’s own jitter', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    /** Largest /healthz latency while `during` runs (or for `ms` when idle), polled back to back. */
    const pollWhile = async (during: Promise<unknown> | null, ms: number) => {
      let max = 0;
      let done = false;
      void during?.finally(() => (done = true));
      const end = Date.now() + ms;
      while (during ? !done : Date.now() < end) {
        const t = performance.now();
        await fetch(`${gwFake.url}/healthz`).then((r) => r.text());
        max = Math.max(max, performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
      return max;
    };
    const word = 'a'.repeat(4 * 1024 * 1024 - 200);
    const body = JSON.stringify({ model: 'service-auto', messages: [{ role: 'user', content: word }], max_tokens: 10 });
    // The body's own parsing (4 MiB of JSON) takes the loop for a moment whatever the tokenizer does:
    // the budget is the machine's jitter on this same request with a model that needs no count.
    const plainBody = body.replace('"service-auto"', '"gpt-4o-mini"');
    // One stall of the scheduler (the other core busy) can add tens of ms to any single reading:
    // the machine's jitter is the worst of two plain requests, and the 4 MiB word must stay within
    // it + 50 ms in one of three tries (the quadratic tokenizer held the loop for minutes in every one).
    const readings: string[] = [];
    let baseline = 0;
    for (let i = 0; i < 2; i++) {
      const t = performance.now();
      const jitter = await pollWhile(
        post(gwFake, acct.apiKey, '/v1/chat/completions', plainBody).then((r) => r.text()),
        0,
      );
      baseline = Math.max(baseline, jitter);
      readings.push(`plain: healthz max ${jitter.toFixed(1)} ms over ${(performance.now() - t).toFixed(0)} ms`);
    }
    let best = Infinity;
    for (let i = 0; i < 3 && best >= baseline + 50; i++) {
      const t = performance.now();
      const auto = post(gwFake, acct.apiKey, '/v1/chat/completions', body);
      const during = await pollWhile(
        auto.then((r) => r.text()),
        0,
      );
      // 4 MiB of one word is ~0.5M tokens: more than any model's context, so service-auto finds none.
      expect((await auto).status).toBe(400);
      best = Math.min(best, during);
      readings.push(`service-auto: healthz max ${during.toFixed(1)} ms over ${(performance.now() - t).toFixed(0)} ms`);
    }
    expect(best, readings.join('; ')).toBeLessThan(baseline + 50);
  });
});

describe('slow clients', () => {
  it('a body trickled a byte a second is cut after REQUEST_TIMEOUT_MS (408 or closed); a stream longer than that is not', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const socket = net.connect(gw.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const t0 = Date.now();
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    let received = '';
    socket.on('data', (d) => (received += d));
    const timer = setInterval(() => socket.writable && socket.write(' '), 1000);
    await new Promise((r) => socket.once('close', r));
    clearInterval(timer);
    const ms = Date.now() - t0;
    // REQUEST_TIMEOUT_MS is 2 s here; node checks every 500 ms.
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(8000);
    if (received) expect(received).toMatch(/^HTTP\/1\.1 408/);

    const g = await startGateway({ config: config([slowFake.url]), env: { REQUEST_TIMEOUT_MS: '1000' } });
    gateways.push(g);
    const res = await chat(g, acct.apiKey, { stream: true });
    const text = await res.text(); // 15 chunks 150 ms apart: over 2 s
    expect(text).toContain('data: [DONE]');
    await g.stop('SIGKILL');
  });
});

describe('malicious upstream usage', () => {
  it('negative counts are not credited; absurd counts are charged no more than the reservation', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    next.push({ usage: { prompt_tokens: -1e12, completion_tokens: -5, total_tokens: -1e12 } });
    const neg = await chat(gw, acct.apiKey, { max_tokens: 100 });
    expect(neg.status).toBe(200);
    const negCost = pico(neg.headers.get('x-service-cost-usd')!);
    expect(negCost).toBeGreaterThanOrEqual(0n);
    expect((await logRow(neg.headers.get('x-request-id')!)).tokensEstimated).toBe(true);

    next.push({ usage: { prompt_tokens: 1e300, completion_tokens: 1e300, total_tokens: 1e300 } });
    const huge = await chat(gw, acct.apiKey, { max_tokens: 100 });
    expect(huge.status).toBe(200);
    const hugeCost = pico(huge.headers.get('x-service-cost-usd')!);
    // gpt-4o-mini: the 100 output tokens reserved at $0.6 per million (600,000 pico-USD a token), and
    // the prompt at most its bound (half the body's bytes) at $0.15 per million.
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hardening' }], max_tokens: 100 });
    expect(hugeCost).toBe(BigInt(Math.ceil(body.length / 2)) * 150_000n + 100n * 600_000n);
    const hugeRow = await logRow(huge.headers.get('x-request-id')!);
    expect(hugeRow.completionTokens).toBe(100);
    await expectLedgerConsistent(acct, '1');
    expect(pico(await balanceOf(acct.userId))).toBeGreaterThan(0n);
  });

  it('with max_tokens and max_completion_tokens both set, the larger is reserved; n completions reserve n outputs', async () => {
    // $0.0001 covers 1 output token but not 4,000 of them ($0.0024).
    const acct = await createAccount({ tier: 'pro', balanceUsd: '0.0001' });
    const res = await chat(gw, acct.apiKey, { max_tokens: 1, max_completion_tokens: 4000 });
    expect(res.status).toBe(402);
    // 100 output tokens ($0.00006) fit; 8 completions of them ($0.00048) do not.
    next.push({});
    expect((await chat(gw, acct.apiKey, { max_tokens: 100 })).status).toBe(200);
    expect((await chat(gw, acct.apiKey, { max_tokens: 100, n: 8 })).status).toBe(402);
    expect((await chat(gw, acct.apiKey, { n: 129 })).status).toBe(400);
  });
});

describe('upstream 401/403', () => {
  it('the channel key refused upstream is the channel’s failure: the next channel serves; with none left, 502 (never the caller’s 401)', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    next.push({ status: 401 });
    const single = await chat(gw, acct.apiKey);
    expect(single.status).toBe(502);
    expect(((await single.json()) as { error: { code: string } }).error.code).toBe('all_channels_failed');

    const g = await startGateway({ config: config([scripted.url, fake.url]) });
    gateways.push(g);
    for (const status of [401, 403]) {
      next.push({ status });
      const res = await chat(g, acct.apiKey);
      expect(res.status, String(status)).toBe(200);
      expect(res.headers.get('x-service-provider')).toBe('openai-2');
      const row = await logRow(res.headers.get('x-request-id')!);
      expect((row.attempts as { status?: number; ok: boolean }[])[0]).toMatchObject({ status, ok: false });
    }
    await g.stop('SIGKILL');
  });
});

describe('upstream 403 on the mirror', () => {
  it('is the channel’s failure (502) unless the caller asked for a beta feature, then it is the caller’s (403 passed through)', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const body = JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const send = (headers: Record<string, string>) =>
      fetch(`${gwFake.url}/v1/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': acct.apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
        body,
      });
    fake.queue({ type: 'status', status: 403 });
    const plain = await send({});
    expect(plain.status).toBe(502);
    fake.queue({ type: 'status', status: 403 });
    const beta = await send({ 'anthropic-beta': 'some-beta-2099-01-01' });
    expect(beta.status).toBe(403);
    expect(((await beta.json()) as { type: string }).type).toBe('error');
  });
});

describe('stream cost trailers', () => {
  it('a stream announces X-Service-Cost-USD/CNY trailers and sends them with the exact cost', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const { status, trailers, body } = await new Promise<{ status: number; trailers: NodeJS.Dict<string>; body: string }>((resolve, reject) => {
      const req = http.request(
        `${gwFake.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json', te: 'trailers' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, trailers: res.trailers, body }));
        },
      );
      req.on('error', reject);
      req.end(
        JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'trailers' }], stream: true, stream_options: { include_usage: true } }),
      );
    });
    expect(status).toBe(200);
    const usage = JSON.parse(
      body
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .at(-1)!
        .slice(6),
    ) as { usage: { cost_usd: number } };
    expect(trailers['x-service-cost-usd']).toBeDefined();
    expect(Number(trailers['x-service-cost-usd'])).toBe(usage.usage.cost_usd);
    expect(pico(trailers['x-service-cost-usd']!)).toBeGreaterThan(0n);
    expect(trailers['x-service-cost-cny']).toBeDefined();
  });
});

describe('count_tokens on the Anthropic mirror', () => {
  it('is held to the tier’s concurrency and request rate, not sent upstream without limit', async () => {
    const acct = await createAccount({ tier: 'free' }); // concurrency 2, 60 per minute
    // Each upstream call takes 300 ms, so the 30 calls overlap whatever the machine's speed.
    fake.setDefault({ type: 'delay', ms: 300 });
    const before = fake.received();
    const body = { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'count me' }] };
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () => post(gwFake, acct.apiKey, '/v1/anthropic/v1/messages/count_tokens', body).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(fake.received() - before).toBe(statuses.filter((s) => s === 200).length);
    fake.setDefault({ type: 'ok' });
    const ok = await post(gwFake, acct.apiKey, '/v1/anthropic/v1/messages/count_tokens', body);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });
});

/** A gateway (grace 400 ms) with one slow stream of 2 s or more open, its first chunk read. */
async function streamInFlight(mode: 'lean' | 'next') {
  const g = await startGateway({ config: config([slowFake.url]), mode, env: { SHUTDOWN_GRACE_MS: '400' } });
  gateways.push(g);
  const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
  const res = await chat(g, acct.apiKey, { stream: true });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  return { g, acct, id: res.headers.get('x-request-id')!, reader };
}

describe('SIGTERM with a stream longer than the grace period', () => {
  it('the cut stream is logged, billed from what was generated, and its reservation and slot released', async () => {
    const { g, acct, id, reader } = await streamInFlight('lean');
    const code = await g.stop('SIGTERM');
    expect(code).toBe(0);
    await reader.read().catch(() => undefined);
    // Written before the process exited.
    const row = await db.requestLog.findFirst({ where: { id } });
    expect(row).not.toBeNull();
    expect(row!.outcome).toBe('client_closed');
    expect(decPico(row!.costUsd)).toBeGreaterThan(0n);
    const entry = await db.ledgerEntry.findFirst({ where: { reference: id } });
    expect(decPico(entry!.amountUsd)).toBe(-decPico(row!.costUsd));
    expect(await redis.zcard(`gw:{u:${acct.userId}}:conc`)).toBe(0);
    // The live balance was settled to the real cost: it equals the database's.
    expect(pico(await balanceOf(acct.userId))).toBe(pico('1') - decPico(row!.costUsd));
    const live = await redis.get(`gw:{u:${acct.userId}}:bal`);
    if (live !== null) expect(BigInt(live)).toBe(pico(await balanceOf(acct.userId)));
  });
});

describe('SIGTERM under next start with a stream longer than the grace period', () => {
  it('the stream is cut (no [DONE]), logged and billed before the process exits', async () => {
    const { g, id, reader } = await streamInFlight('next');
    const exited = g.stop('SIGTERM');
    let text = '';
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (r.done) break;
      text += new TextDecoder().decode(r.value);
    }
    expect(await exited).toBe(0);
    // Cut, not completed: the stream ends without [DONE] (with an error event when the process
    // got it out before exiting).
    expect(text).not.toContain('[DONE]');
    const row = await db.requestLog.findFirst({ where: { id } });
    expect(row).not.toBeNull();
    expect(decPico(row!.costUsd)).toBeGreaterThan(0n);
    const entry = await db.ledgerEntry.findFirst({ where: { reference: id } });
    expect(decPico(entry!.amountUsd)).toBe(-decPico(row!.costUsd));
  }, 60_000);
});

describe('after all of the above', () => {
  it('every scripted upstream reply was consumed by the request it was meant for', () => {
    expect(scriptedCalls).toBeGreaterThan(0);
    expect(next).toHaveLength(0);
  });
});
