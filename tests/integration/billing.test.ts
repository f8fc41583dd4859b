// Billing end to end against the real PostgreSQL and Redis: a production gateway process
// (`node dist/server.mjs`) in front of the fake upstream.
//
// Every money figure is recomputed here from the operator prices in testConfig and the usage the
// fake reports (its tokenizer is exported, so the expected token counts are known in advance), in
// integer pico-USD, and compared to the last digit with: the X-Service-Cost-USD/CNY headers, the
// raw `service.cost_usd` text of the body (not a parsed float), the stream's final usage chunk, the
// request-log row and the usage ledger entry.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { countTokens, DEFAULT_REPLY, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { singleton } from '@/lib/singleton';
import pg from 'pg';
import { getLimiter } from '@/lib/limits/runtime';
import { PICO, pico } from '../support/money';

// ---- exact money helpers (independent of lib/money) ----------------------------------

/** Operator prices in pico-USD per token (USD per million tokens x 10^6). */
const PRICE = {
  'gpt-4o-mini': { input: 150_000n, output: 600_000n },
  'deepseek-chat': { input: 270_000n, output: 1_100_000n },
  'text-embedding-3-small': { input: 20_000n, output: 0n },
} as const;

/** Exact decimal text of a pico amount (no trailing zeros). */
function fmt(pico: bigint): string {
  const neg = pico < 0n;
  const abs = neg ? -pico : pico;
  const frac = (abs % PICO).toString().padStart(12, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / PICO}${frac ? `.${frac}` : ''}`;
}

const decPico = (d: { toFixed(n: number): string }) => pico(d.toFixed(12));
/** CNY at 7.2: exact whenever the USD figure is a multiple of 5 pico (every price here is). */
function cny(usd: bigint): bigint {
  expect((usd * 72n) % 10n).toBe(0n);
  return (usd * 72n) / 10n;
}

/** Raw text of the first `"field":<number>` in a JSON text. */
function rawNumber(text: string, field: string): string {
  const m = new RegExp(`"${field}":(-?[0-9][0-9.eE+-]*)`).exec(text);
  if (!m) throw new Error(`no numeric ${field} in ${text.slice(0, 300)}`);
  return m[1];
}

// ---- fixtures ---------------------------------------------------------------------------------

let fake: FakeUpstream;
let gw: RunningGateway;
let db: Awaited<ReturnType<typeof getDb>>;
const extraGateways: RunningGateway[] = [];
const extraFakes: FakeUpstream[] = [];

beforeAll(async () => {
  db = await getDb();
  countTokens('warm up the fake upstream tokenizer'); // its first use takes seconds on a busy machine
  fake = await startFakeUpstream();
  // Reservations are checked exactly here: a request the balance cannot cover is refused, not lowered to fit.
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], overrides: { clamp_output_to_budget: false } }) });
});

afterAll(async () => {
  await Promise.all([gw, ...extraGateways].map((g) => g?.stop('SIGKILL')));
  await Promise.all([fake, ...extraFakes].map((f) => f?.close()));
  await getLimiter().close();
  await db?.$disconnect();
});

const client = (g: RunningGateway, apiKey: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey, maxRetries: 0 });

async function logRow(id: string, timeoutMs = 10_000) {
  return waitFor(() => db.requestLog.findFirst({ where: { id } }), timeoutMs);
}

async function usageEntry(id: string, timeoutMs = 10_000) {
  return waitFor(() => db.ledgerEntry.findFirst({ where: { kind: 'usage', reference: id } }), timeoutMs);
}

async function chatRaw(g: RunningGateway, apiKey: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

/** Checks that the log row and the usage ledger entry carry exactly `cost` (and CNY = USD x 7.2). */
async function expectBooked(requestId: string, userId: string, cost: bigint, tokens?: { prompt: number; completion: number }) {
  const row = await logRow(requestId);
  expect(row.userId).toBe(userId);
  expect(decPico(row.costUsd)).toBe(cost);
  expect(decPico(row.costCny)).toBe(cny(cost));
  expect(row.cnyRate.toString()).toBe('7.2');
  if (tokens) {
    expect(row.promptTokens).toBe(tokens.prompt);
    expect(row.completionTokens).toBe(tokens.completion);
  }
  const entry = await usageEntry(requestId);
  expect(entry.userId).toBe(userId);
  expect(decPico(entry.amountUsd)).toBe(-cost);
  // Exactly one usage entry per request.
  expect(await db.ledgerEntry.count({ where: { kind: 'usage', reference: requestId } })).toBe(1);
  return row;
}

// ---- exact cost figures -------------------------------------------------------------------------

describe('cost figures agree to the last digit', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
  });

  it('chat completion (non-streaming): header, raw body text, log row, ledger, CNY', async () => {
    const prompt = 'Please price this request exactly.';
    const promptTokens = countTokens(prompt) + 3;
    const completionTokens = countTokens(DEFAULT_REPLY);
    const expected = BigInt(promptTokens) * PRICE['gpt-4o-mini'].input + BigInt(completionTokens) * PRICE['gpt-4o-mini'].output;
    const before = pico(await balanceOf(acct.userId));

    const res = await client(gw, acct.apiKey)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }] })
      .asResponse();
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text) as { usage: { prompt_tokens: number; completion_tokens: number }; service: { channel: string } };
    expect(body.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: completionTokens });

    expect(res.headers.get('x-service-cost-usd')).toBe(fmt(expected));
    expect(res.headers.get('x-service-cost-cny')).toBe(fmt(cny(expected)));
    expect(res.headers.get('x-service-model-id')).toBe('gpt-4o-mini');
    expect(body.service.channel).toBe('openai-1');
    // The JSON number is written as exact decimal text, never 5.7e-6 notation.
    expect(rawNumber(text, 'cost_usd')).toBe(fmt(expected));

    const id = res.headers.get('x-request-id')!;
    await expectBooked(id, acct.userId, expected, { prompt: promptTokens, completion: completionTokens });
    expect(pico(await balanceOf(acct.userId))).toBe(before - expected);
  });

  it('chat completion (streaming): final usage chunk cost_usd/cost_cny, log row, ledger', async () => {
    const prompt = 'Stream me a priced answer.';
    const promptTokens = countTokens(prompt) + 3;
    const completionTokens = countTokens(DEFAULT_REPLY);
    const expected = BigInt(promptTokens) * PRICE['gpt-4o-mini'].input + BigInt(completionTokens) * PRICE['gpt-4o-mini'].output;

    const res = await client(gw, acct.apiKey)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true } })
      .asResponse();
    expect(res.status).toBe(200);
    const text = await res.text();
    const lines = text.split('\n').filter((l) => l.startsWith('data: '));
    expect(lines.at(-1)).toBe('data: [DONE]');
    const usageLine = lines.at(-2)!;
    const usageChunk = JSON.parse(usageLine.slice(6)) as { choices: unknown[]; usage: Record<string, number> };
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens });
    expect(rawNumber(usageLine, 'cost_usd')).toBe(fmt(expected));
    expect(rawNumber(usageLine, 'cost_cny')).toBe(fmt(cny(expected)));
    // Reassembled text is the reply.
    const content = lines
      .slice(0, -2)
      .map((l) => JSON.parse(l.slice(6)) as { choices: { delta: { content?: string } }[] })
      .map((c) => c.choices[0]?.delta.content ?? '')
      .join('');
    expect(content).toBe(DEFAULT_REPLY);

    await expectBooked(res.headers.get('x-request-id')!, acct.userId, expected, { prompt: promptTokens, completion: completionTokens });
  });

  it('embeddings: header, raw body text, log row, ledger, CNY', async () => {
    const input = ['billing is exact', 'to the last pico-dollar, in bigint'];
    const promptTokens = input.reduce((n, s) => n + countTokens(s), 0);
    const expected = BigInt(promptTokens) * PRICE['text-embedding-3-small'].input;

    const res = await client(gw, acct.apiKey).embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'float' }).asResponse();
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text) as { data: { embedding: number[] }[]; usage: { prompt_tokens: number } };
    expect(body.data).toHaveLength(2);
    expect(body.data[0].embedding).toHaveLength(1536);
    expect(body.usage.prompt_tokens).toBe(promptTokens);
    expect(res.headers.get('x-service-cost-usd')).toBe(fmt(expected));
    expect(res.headers.get('x-service-cost-cny')).toBe(fmt(cny(expected)));
    expect(rawNumber(text, 'cost_usd')).toBe(fmt(expected));

    await expectBooked(res.headers.get('x-request-id')!, acct.userId, expected, { prompt: promptTokens, completion: 0 });
  });
});

// ---- concurrency against a small balance --------------------------------------------------------

describe('50 concurrent requests against a balance that covers about 10 reservations', () => {
  it('admits only what the balance covers; every admitted request is logged and charged; the rest get 402', async () => {
    const maxTokens = 1000;
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'concurrency and money' }], max_tokens: maxTokens });
    const promptBound = BigInt(Math.ceil(Buffer.byteLength(body) / 2));
    // The reservation covers the priciest model the request may be served by: gpt-4o-mini falls
    // back to deepseek-chat, so that is what is held.
    const reservation = [PRICE['gpt-4o-mini'], PRICE['deepseek-chat']]
      .map((p) => promptBound * p.input + BigInt(maxTokens) * p.output)
      .reduce((a, b) => (a > b ? a : b));
    const initial = reservation * 10n + reservation / 2n;
    const acct = await createAccount({ tier: 'enterprise', balanceUsd: fmt(initial) });

    const outputBefore = gw.output().length;
    // Every admitted request stays in flight long enough for all 50 to be admitted or refused first.
    fake.setDefault({ type: 'delay', ms: 1500 });
    let results: Response[];
    try {
      results = await Promise.all(Array.from({ length: 50 }, () => chatRaw(gw, acct.apiKey, body)));
    } finally {
      fake.setDefault({ type: 'ok' });
    }
    const admitted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    // KNOWN ISSUE (lib/limits/failover-limiter.ts, not ours to change): if a Redis call times out
    // (100-150 ms: an overloaded machine), the limiter falls back to an in-process balance loaded
    // from the database, blind to the reservations held in Redis, so up to twice the balance's worth
    // of reservations can be admitted during the outage. Strict when that did not happen.
    const failover = gw.output().slice(outputBefore).includes('limiter falling back to in-process');
    if (!failover) expect(admitted.length).toBe(10);
    else {
      console.warn(`limiter fell back to in-process during the run: ${admitted.length} admitted instead of 10`);
      expect(admitted.length).toBeGreaterThanOrEqual(10);
      expect(admitted.length).toBeLessThanOrEqual(20);
    }
    for (const r of refused) {
      expect(r.status).toBe(402);
      expect(r.headers.get('x-should-retry')).toBe('false');
      const err = (await r.json()) as { error: { code: string; type: string; message: string; param: unknown } };
      expect(err.error.code).toBe('insufficient_balance');
      expect(err.error).toHaveProperty('param');
    }

    let total = 0n;
    for (const r of admitted) {
      const cost = pico(r.headers.get('x-service-cost-usd')!);
      expect(cost).toBeGreaterThan(0n);
      const text = await r.text();
      expect(rawNumber(text, 'cost_usd')).toBe(fmt(cost));
      await expectBooked(r.headers.get('x-request-id')!, acct.userId, cost);
      total += cost;
    }
    const after = pico(await balanceOf(acct.userId));
    expect(after).toBe(initial - total);
    expect(after).toBeGreaterThanOrEqual(0n);
    const ledgerSum = (await db.ledgerEntry.findMany({ where: { userId: acct.userId, kind: 'usage' } })).reduce((s, e) => s + decPico(e.amountUsd), 0n);
    expect(ledgerSum).toBe(-total);
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(admitted.length);

    // The reservations were all settled: the account can still be admitted.
    const again = await chatRaw(gw, acct.apiKey, body);
    expect(again.status).toBe(200);
  });
});

// ---- failures and aborts ----------------------------------------------------------------------

describe('failures and aborts', () => {
  it('all channels failing (500) charges nothing and logs a 502 with cost 0', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const before = await balanceOf(acct.userId);
    fake.setDefault({ type: 'status', status: 500 });
    let res: Response;
    try {
      res = await chatRaw(gw, acct.apiKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fail me' }] });
    } finally {
      fake.setDefault({ type: 'ok' });
    }
    expect(res.status).toBe(502);
    expect(res.headers.get('x-service-cost-usd')).toBe('0');
    const err = (await res.json()) as { error: { code: string } };
    expect(err.error.code).toBe('all_channels_failed');
    const row = await logRow(res.headers.get('x-request-id')!);
    expect(row.status).toBe(502);
    expect(decPico(row.costUsd)).toBe(0n);
    expect(await db.ledgerEntry.count({ where: { kind: 'usage', reference: row.id } })).toBe(0);
    expect(await balanceOf(acct.userId)).toBe(before);
  });

  it('a client that aborts mid-stream is billed for what was generated and logged as client_closed', async () => {
    const slow = await startFakeUpstream({ chunkDelayMs: 200 });
    extraFakes.push(slow);
    const reply = 'one two three four five six seven eight nine ten eleven twelve';
    slow.setReply(reply);
    const g = await startGateway({ config: testConfig({ openaiUrls: [slow.url] }) });
    extraGateways.push(g);
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const before = pico(await balanceOf(acct.userId));
    const prompt = 'stream slowly';

    const controller = new AbortController();
    const res = await chatRaw(g, acct.apiKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], stream: true }, controller.signal);
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/"content"/g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const row = await logRow(id, 15_000);
    expect(row.outcome).toBe('client_closed');
    expect(row.stream).toBe(true);
    // The gateway keeps reading the upstream for its usage: the whole generation is billed, at the
    // upstream's own count.
    const promptTokens = countTokens(prompt) + 3;
    const completionTokens = countTokens(reply);
    expect(row.tokensEstimated, JSON.stringify(row)).toBe(false);
    const expected = BigInt(promptTokens) * PRICE['gpt-4o-mini'].input + BigInt(completionTokens) * PRICE['gpt-4o-mini'].output;
    await expectBooked(id, acct.userId, expected, { prompt: promptTokens, completion: completionTokens });
    expect(pico(await balanceOf(acct.userId))).toBe(before - expected);
  });
});

// ---- the write-behind log writer, in process ----------------------------------------------------

describe('log writer (in process, real PostgreSQL)', () => {
  it('runs one flush at a time: concurrent flush calls neither write a batch twice nor drop rows', async () => {
    const writer = await import('@/lib/billing/writer');
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const cost = 1_234_560n;
    const rec = (i: number): import('@/lib/billing/writer').LogRecord => ({
      id: `req_flushrace_${acct.userId.slice(0, 8)}_${i}`,
      createdAt: new Date(),
      userId: acct.userId,
      apiKeyId: acct.keyId,
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
      costPico: cost,
      costCnyPico: cny(cost),
      cnyRate: '7.2',
      latencyMs: 1,
      firstTokenMs: 1,
      errorCode: null,
      routeReason: null,
    });
    // Count overlapping batch writes (one statement each on the writer's own pg pool), each slowed
    // down so that callers pile up.
    const client = pg.Pool.prototype as unknown as { query: (...args: unknown[]) => Promise<unknown> };
    const original = client.query;
    let active = 0;
    let maxActive = 0;
    client.query = async function (this: unknown, ...args: unknown[]) {
      maxActive = Math.max(maxActive, ++active);
      try {
        await new Promise((r) => setTimeout(r, 100));
        return await original.apply(this, args);
      } finally {
        active--;
      }
    };
    try {
      writer.enqueueLog(rec(0));
      const first = writer.flushLogs();
      const q = singleton<{ flushing?: Promise<void> }>('log-queue', () => {
        throw new Error('the log queue should exist by now');
      });
      // A row arrives just as the first flush ends, while several callers wait on it (as when the
      // queue is over its batch size and every enqueue asks for a flush).
      void q.flushing!.then(() => writer.enqueueLog(rec(1)));
      const waiting = [writer.flushLogs(), writer.flushLogs(), writer.flushLogs()];
      // More rows keep arriving while those flushes run.
      for (let i = 2; i < 12; i++) setTimeout(() => writer.enqueueLog(rec(i)), 30 * i);
      await new Promise((r) => setTimeout(r, 400));
      await Promise.all([first, ...waiting]);
      await new Promise((r) => setTimeout(r, 200));
      await writer.flushLogs();
    } finally {
      client.query = original;
    }
    const ids = Array.from({ length: 12 }, (_, i) => rec(i).id);
    expect(writer.queuedLogCount()).toBe(0);
    expect(await db.requestLog.count({ where: { id: { in: ids } } })).toBe(12);
    expect(await db.ledgerEntry.count({ where: { kind: 'usage', reference: { in: ids } } })).toBe(12);
    expect(pico(await balanceOf(acct.userId))).toBe(PICO - 12n * cost);
    expect(maxActive).toBe(1);
  });
});

// ---- log flush on SIGTERM ---------------------------------------------------------------------

describe('SIGTERM flushes the request log', () => {
  it('rows queued behind a 60 s flush timer reach the database on SIGTERM', async () => {
    const g = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { LOG_FLUSH_MS: '60000' } });
    extraGateways.push(g);
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const before = pico(await balanceOf(acct.userId));
    const ids: string[] = [];
    let total = 0n;
    for (let i = 0; i < 5; i++) {
      const res = await chatRaw(g, acct.apiKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `flush me ${i}` }] });
      expect(res.status).toBe(200);
      await res.text();
      ids.push(res.headers.get('x-request-id')!);
      total += pico(res.headers.get('x-service-cost-usd')!);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await db.requestLog.count({ where: { id: { in: ids } } })).toBe(0);

    expect(await g.stop('SIGTERM')).toBe(0);
    expect(await db.requestLog.count({ where: { id: { in: ids } } })).toBe(5);
    expect(await db.ledgerEntry.count({ where: { kind: 'usage', reference: { in: ids } } })).toBe(5);
    expect(pico(await balanceOf(acct.userId))).toBe(before - total);
  });
});
