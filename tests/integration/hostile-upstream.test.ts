// What an upstream can do to the gateway and to what it charges (issue 37), against the built server
// (`node dist/server.mjs`), the real PostgreSQL and Redis:
//   - an SSE line that never ends, or a stream that never ends, is cut at its bound: the connection
//     dropped, the CPU and memory of the gateway bounded, the client answered 502 (nothing sent yet)
//     or sent an error event and the cost trailers (mid-stream), billed for what was generated;
//   - the charge never exceeds the reservation (an upstream reporting 4,096 tokens for max_tokens 1);
//   - rate limits (429) of one account never disable a channel for the others; one account's
//     failures never auto-disable it;
//   - the channel's key never reaches the caller or the log from an upstream body; account-level
//     refusals (Anthropic's credit balance, OpenAI's insufficient_quota) fall back, unseen by the caller;
//   - built-in tool calls are billed at their configured price, refused without one, reserved.
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream, type Fault } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { getLimiter } from '@/lib/limits/runtime';
import { pico } from '../support/money';

type Cfg = Record<string, any>;
const MiB = 1024 * 1024;
const decPico = (d: { toFixed(n: number): string }) => pico(d.toFixed(12));

/** CPU time (user + system) of a process so far, in ms (/proc, clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Peak resident memory of a process so far (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

/**
 * The faithful fake, misbehaving on markers in the request: FLOOD (an endless SSE line), ENDLESS
 * (a stream that never ends), RATE (429), BOOM (500), ECHOKEY (a 400 echoing the request's
 * headers), CREDIT (Anthropic's credit balance 400 on the first channel; CREDIT-ALL on every one),
 * QUOTA (OpenAI's insufficient_quota 429 on the first channel).
 */
function faultFor(req: { body: string; headers: Record<string, string | string[] | undefined> }): Fault | undefined {
  const b = req.body;
  const key = String(req.headers['x-api-key'] ?? req.headers.authorization ?? '');
  if (b.includes('FLOOD')) return { type: 'flood', bytes: 64 * MiB };
  if (b.includes('ENDLESS')) return { type: 'endless' };
  if (b.includes('RATE')) return { type: 'status', status: 429 };
  if (b.includes('BOOM')) return { type: 'status', status: 500 };
  if (b.includes('ECHOKEY'))
    return { type: 'status', status: 400, body: { error: { message: `bad request; you sent ${JSON.stringify(req.headers)}`, type: 'invalid_request_error' } } };
  const credit = {
    type: 'error',
    error: {
      type: 'invalid_request_error',
      message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
    },
  };
  if (b.includes('CREDIT-ALL') || (b.includes('CREDIT') && key.endsWith('-1'))) return { type: 'status', status: 400, body: credit };
  if (b.includes('QUOTA') && key.endsWith('-1'))
    return {
      type: 'status',
      status: 429,
      body: {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      },
    };
  return undefined;
}

/**
 * An upstream whose replies the tests script: chat completions reporting `completion_tokens:
 * 4096` whatever max_tokens said; Anthropic messages reporting `server_tool_use` web searches;
 * Responses with web_search_call items.
 */
const SCRIPTED_SEARCHES = 3;
function startScripted(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const json = JSON.parse(body) as { model: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/v1/messages') {
        res.end(
          JSON.stringify({
            id: 'msg_scripted',
            type: 'message',
            role: 'assistant',
            model: json.model,
            content: [
              { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } },
              { type: 'text', text: 'Found it.' },
            ],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 100, output_tokens: 10, server_tool_use: { web_search_requests: SCRIPTED_SEARCHES } },
          }),
        );
        return;
      }
      if (req.url === '/v1/responses') {
        res.end(
          JSON.stringify({
            id: 'resp_scripted',
            object: 'response',
            model: json.model,
            status: 'completed',
            output: [
              { type: 'web_search_call', id: 'ws_1', status: 'completed' },
              { type: 'web_search_call', id: 'ws_2', status: 'completed' },
              { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Found it.', annotations: [] }] },
            ],
            usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 },
          }),
        );
        return;
      }
      res.end(
        JSON.stringify({
          id: 'chatcmpl-scripted',
          object: 'chat.completion',
          created: 1,
          model: json.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'a very long answer' }, finish_reason: 'length' }],
          usage: { prompt_tokens: 10, completion_tokens: 4096, total_tokens: 4106 },
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

const PREFIX = 'hu-';
let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let scripted: { url: string; close: () => Promise<void> };
let gw: RunningGateway; // two OpenAI and two Anthropic channels on the fake
let gwScripted: RunningGateway; // OpenAI, Anthropic and a native Responses channel on the scripted upstream

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream({ faultFor });
  scripted = await startScripted();
  const breaker = { failures: 3, cooldown_ms: 1000, auto_disable_after: 20, probe_interval_ms: 500 };
  const main = testConfig({
    openaiUrls: [fake.url, fake.url],
    anthropicUrls: [fake.url, fake.url],
    channelPrefix: PREFIX,
    overrides: { circuit_breaker: breaker },
  }) as Cfg;
  main.models = main.models.map((m: Cfg) => ({ ...m, fallback_models: [] }));
  const withTools = testConfig({
    openaiUrls: [scripted.url],
    anthropicUrls: [scripted.url],
    channelPrefix: `${PREFIX}s-`,
    overrides: { tool_prices_usd_per_thousand_calls: { web_search: '10' } },
  }) as Cfg;
  withTools.channels.push({
    name: `${PREFIX}s-native`,
    protocol: 'openai',
    responses: true,
    base_url: `${scripted.url}/v1`,
    api_key: 'upstream-secret-native',
    models: ['gpt-native'],
    timeouts: { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 },
  });
  withTools.models.push({
    name: 'gpt-native',
    owned_by: 'openai',
    kind: 'chat',
    context_window: 128000,
    max_output_tokens: 4096,
    input_price_usd_per_million: '2',
    output_price_usd_per_million: '8',
  });
  [gw, gwScripted] = await Promise.all([startGateway({ config: main }), startGateway({ config: withTools })]);
});

afterAll(async () => {
  await Promise.all([gw, gwScripted].map((g) => g?.stop('SIGKILL')));
  await fake?.close();
  await scripted?.close();
  await getLimiter().close();
  await db?.$disconnect();
});

function post(g: RunningGateway, apiKey: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${g.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}
const chat = (g: RunningGateway, apiKey: string, content: string, extra: Record<string, unknown> = {}) =>
  post(g, apiKey, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const messages = (g: RunningGateway, apiKey: string, content: string, extra: Record<string, unknown> = {}) =>
  post(g, apiKey, '/v1/anthropic/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content }], ...extra });
const logRow = (id: string | null, ms = 15_000) => waitFor(() => db.requestLog.findFirst({ where: { id: id! } }), ms);

/** A streamed chat request read with a raw HTTP client: status, body text and the trailers. */
function rawStream(
  g: RunningGateway,
  apiKey: string,
  body: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; trailers: NodeJS.Dict<string> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${g.url}/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', te: 'trailers' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('a hostile upstream stream is bounded', { timeout: 120_000 }, () => {
  it('an SSE line that never ends (64 MiB, no newline) is cut at 16 MiB: 502, the connection dropped, CPU and memory bounded', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const pid = gw.process.pid!;
    const cpu0 = cpuMs(pid);
    const rss0 = peakRss(pid);
    const res = await chat(gw, acct.apiKey, 'FLOOD', { stream: true, max_tokens: 10 });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('all_channels_failed');
    // Each of the two channels was read to the bound, not to the end (the rest not even sent).
    expect(fake.faultBytes()).toBeLessThan(40 * MiB);
    // Before: 63 s of CPU and 2.7 GB for this; now the bytes are scanned once.
    expect(cpuMs(pid) - cpu0).toBeLessThan(20_000);
    expect(peakRss(pid) - rss0).toBeLessThan(800 * MiB);
    const row = await logRow(res.headers.get('x-request-id'));
    expect((row.attempts as { error?: string }[]).map((a) => a.error)).toEqual([
      expect.stringContaining('SSE event longer than'),
      expect.stringContaining('SSE event longer than'),
    ]);
    expect(decPico(row.costUsd)).toBe(0n);
  });

  it('a stream that never ends is cut after its byte bound: an error event and the cost trailers, billed for at most the output reserved', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    fake.setReply('x'.repeat(16 * 1024));
    const pid = gw.process.pid!;
    const cpu0 = cpuMs(pid);
    const rss0 = peakRss(pid);
    try {
      const res = await rawStream(gw, acct.apiKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ENDLESS' }], stream: true, max_tokens: 50 });
      expect(res.status).toBe(200);
      expect(res.headers.trailer).toBe('x-service-cost-usd, x-service-cost-cny, x-service-unpriced, x-service-error');
      const events = res.body.split('\n\n').filter((e) => e.startsWith('data: '));
      expect(events.length).toBeGreaterThan(100);
      expect(events.at(-1)).toContain('"error"');
      expect(res.body).not.toContain('[DONE]');
      // The trailers the stream announced: the cost billed and what ended it.
      expect(res.trailers['x-service-error']).toBe('upstream_error');
      const row = await logRow(res.headers['x-request-id'] as string);
      expect(res.trailers['x-service-cost-usd']).toBe(row.costUsd.toFixed(12).replace(/\.?0+$/, ''));
      expect(row.outcome).toBe('upstream_error');
      expect(row.completionTokens).toBe(50);
      expect(decPico(row.costUsd)).toBeGreaterThan(0n);
      expect(pico(await balanceOf(acct.userId))).toBe(pico('1') - decPico(row.costUsd));
    } finally {
      fake.reset();
    }
    // 64 MiB and 50 KiB relayed, then the upstream connection dropped (plus what socket buffers held).
    expect(fake.faultBytes()).toBeGreaterThan(64 * MiB);
    expect(fake.faultBytes()).toBeLessThan(80 * MiB);
    expect(cpuMs(pid) - cpu0).toBeLessThan(30_000);
    expect(peakRss(pid) - rss0).toBeLessThan(800 * MiB);
  });

  it('on /v1/responses too: the endless stream ends with an error event, what it kept bounded', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    fake.setReply('x'.repeat(16 * 1024));
    const pid = gw.process.pid!;
    const rss0 = peakRss(pid);
    try {
      const res = await post(gw, acct.apiKey, '/v1/responses', { model: 'gpt-4o-mini', input: 'ENDLESS', stream: true, max_output_tokens: 50 });
      expect(res.status).toBe(200);
      const text = await res.text();
      const last = text.trimEnd().split('\n\n').at(-1)!;
      expect(last).toMatch(/^event: error\n/);
      const row = await logRow(res.headers.get('x-request-id'));
      expect(row).toMatchObject({ outcome: 'upstream_error', completionTokens: 50 });
    } finally {
      fake.reset();
    }
    expect(fake.faultBytes()).toBeLessThan(80 * MiB);
    // Before: +650 MB in 40 s, and on without end.
    expect(peakRss(pid) - rss0).toBeLessThan(800 * MiB);
  });

  it('a stream that breaks mid-way still sends its trailers: the cost of what was generated and the error', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    fake.queue({ type: 'cut', afterChunks: 3 });
    const res = await rawStream(gw, acct.apiKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four five six' }], stream: true });
    expect(res.status).toBe(200);
    expect(res.trailers['x-service-error']).toBe('upstream_error');
    const row = await logRow(res.headers['x-request-id'] as string);
    expect(res.trailers['x-service-cost-usd']).toBe(row.costUsd.toFixed(12).replace(/\.?0+$/, ''));
    expect(res.trailers['x-service-cost-cny']).toBe(row.costCny.toFixed(12).replace(/\.?0+$/, ''));
  });
});

describe('the charge never exceeds the reservation', { timeout: 60_000 }, () => {
  it('30 concurrent requests with max_tokens 1 answered "4,096 completion tokens": the balance never goes negative, the key budget never exceeded', async () => {
    // Each reserves about $0.00001 (its prompt bound and 1 output token); 4,096 tokens would be $0.0025.
    const poor = await createAccount({ tier: 'enterprise', balanceUsd: '0.0002' });
    const budgeted = await createAccount({ tier: 'enterprise', balanceUsd: '1' });
    await db.apiKey.update({ where: { id: budgeted.keyId }, data: { budgetUsd: '0.0001' } });
    const run = (a: TestAccount) => Promise.all(Array.from({ length: 30 }, () => chat(gwScripted, a.apiKey, 'lie', { max_tokens: 1 })));
    const [forPoor, forBudgeted] = await Promise.all([run(poor), run(budgeted)]);
    for (const [a, replies] of [
      [poor, forPoor],
      [budgeted, forBudgeted],
    ] as const) {
      const served = replies.filter((r) => r.status === 200);
      expect(served.length).toBeGreaterThan(0);
      expect(replies.every((r) => r.status === 200 || r.status === 402)).toBe(true);
      const ids = replies.map((r) => r.headers.get('x-request-id')!);
      const rows = await waitFor(async () => {
        const found = await db.requestLog.findMany({ where: { id: { in: ids } } });
        return found.length === ids.length ? found : null;
      }, 15_000);
      const spent = rows.reduce((s, r) => s + decPico(r.costUsd), 0n);
      const servedRow = rows.find((r) => r.status === 200)!;
      expect(servedRow.completionTokens).toBe(1);
      expect((servedRow.attempts as { billing?: Record<string, unknown> }[]).at(-1)!.billing).toMatchObject({
        capped: true,
        completionTokensReported: 4096,
        completionTokensBilled: 1,
      });
      if (a === poor) {
        expect(pico(await balanceOf(a.userId))).toBeGreaterThanOrEqual(0n);
        expect(pico(await balanceOf(a.userId))).toBe(pico('0.0002') - spent);
      } else expect(spent).toBeLessThanOrEqual(pico('0.0001'));
    }
  });
});

describe('rate limits and one account’s failures are not a channel’s ill health', { timeout: 60_000 }, () => {
  it('25 upstream 429s and 25 upstream 500s of one account leave the channels enabled (auto_disable_after: 20); other accounts are served', async () => {
    const noisy = await createAccount({ tier: 'enterprise', balanceUsd: '1' });
    const other = await createAccount({ tier: 'pro', balanceUsd: '1' });
    for (let i = 0; i < 25; i++) expect((await chat(gw, noisy.apiKey, 'RATE')).status).toBe(502);
    const row = await logRow((await chat(gw, noisy.apiKey, 'RATE')).headers.get('x-request-id'));
    expect((row.attempts as { status: number; error: string }[])[0]).toMatchObject({ status: 429, error: expect.stringContaining('rate-limited') });
    for (let i = 0; i < 25; i++) expect((await chat(gw, noisy.apiKey, 'BOOM')).status).toBe(502);
    // The override sync runs every 500 ms: long enough for an automatic disable to have happened.
    await new Promise((r) => setTimeout(r, 2500));
    const disabled = await db.channelOverride.findMany({ where: { channelId: { in: [`${PREFIX}openai-1`, `${PREFIX}openai-2`] }, disabled: true } });
    expect(disabled).toEqual([]);
    expect((await chat(gw, other.apiKey, 'hello')).status).toBe(200);
  });
});

describe('upstream error bodies', { timeout: 60_000 }, () => {
  it('an upstream 400 echoing the request headers reaches the caller without the channel key', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const res = await chat(gw, acct.apiKey, 'ECHOKEY');
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('upstream-secret');
    const row = await logRow(res.headers.get('x-request-id'));
    expect(JSON.stringify(row)).not.toContain('upstream-secret');
  });

  it('Anthropic’s “credit balance is too low” falls back to the next channel; with none left, a generic 502 without the upstream’s message', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const served = await messages(gw, acct.apiKey, 'CREDIT');
    expect(served.status).toBe(200);
    expect(served.headers.get('x-service-provider')).toBe(`${PREFIX}anthropic-2`);
    const row = await logRow(served.headers.get('x-request-id'));
    expect((row.attempts as { status: number; ok: boolean }[])[0]).toMatchObject({ status: 400, ok: false });

    const refused = await messages(gw, acct.apiKey, 'CREDIT-ALL');
    expect(refused.status).toBe(502);
    const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.message).not.toMatch(/credit|billing/i);

    // OpenAI's insufficient_quota 429: the channel's failure (the operator's account), the next one serves.
    const quota = await chat(gw, acct.apiKey, 'QUOTA');
    expect(quota.status).toBe(200);
    const quotaRow = await logRow(quota.headers.get('x-request-id'));
    expect((quotaRow.attempts as { status: number; error: string }[])[0]).toMatchObject({ status: 429, error: expect.stringContaining('account') });
  });
});

describe('built-in tool fees', { timeout: 60_000 }, () => {
  // claude-sonnet-4-5: $3 / $15 per million; web_search: $10 per 1,000 calls ($0.01 each).
  const sonnetTokens = 100n * 3_000_000n + 10n * 15_000_000n;
  const search = 10_000_000_000n;

  it('Anthropic server web searches are billed per call (usage.server_tool_use), in USD and CNY, and shown in the log', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const res = await messages(gwScripted, acct.apiKey, 'search', { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }] });
    expect(res.status).toBe(200);
    const cost = sonnetTokens + BigInt(SCRIPTED_SEARCHES) * search;
    expect(pico(res.headers.get('x-service-cost-usd')!)).toBe(cost);
    expect(pico(res.headers.get('x-service-cost-cny')!)).toBe((cost * 72n) / 10n);
    const row = await logRow(res.headers.get('x-request-id'));
    expect(decPico(row.costUsd)).toBe(cost);
    expect((row.attempts as { billing?: unknown }[])[0].billing).toEqual({ toolCalls: { web_search: SCRIPTED_SEARCHES }, toolCostUsd: '0.03' });
    expect(pico(await balanceOf(acct.userId))).toBe(pico('1') - cost);
  });

  it('calls are reserved at admission (max_uses, else 10) and billed up to what was reserved', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '0.05' });
    // Ten searches ($0.10) cannot be reserved from $0.05.
    const refused = await messages(gwScripted, acct.apiKey, 'search', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
    expect(refused.status).toBe(402);
    const res = await messages(gwScripted, acct.apiKey, 'search', { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }] });
    expect(res.status).toBe(200);
    expect(pico(res.headers.get('x-service-cost-usd')!)).toBe(sonnetTokens + 2n * search);
    const row = await logRow(res.headers.get('x-request-id'));
    expect((row.attempts as { billing?: unknown }[])[0].billing).toMatchObject({ toolCalls: { web_search: 2 }, toolCallsReported: { web_search: 3 } });
  });

  it('a tool without a price is refused with a 400 naming it, before anything goes upstream', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const res = await messages(gwScripted, acct.apiKey, 'run code', {
      tools: [
        { type: 'web_search_20250305', name: 'web_search' },
        { type: 'code_execution_20250825', name: 'code_execution' },
      ],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.error.message).toContain('code_execution_20250825');
    const native = await post(gwScripted, acct.apiKey, '/v1/responses', {
      model: 'gpt-native',
      input: 'x',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    expect(native.status).toBe(400);
    expect(((await native.json()) as { error: { param: string } }).error.param).toBe('tools[0].type');
  });

  it('Responses web_search_call items on a native channel are billed per call', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const res = await post(gwScripted, acct.apiKey, '/v1/responses', { model: 'gpt-native', input: 'news?', tools: [{ type: 'web_search' }], store: false });
    expect(res.status).toBe(200);
    // gpt-native: $2 / $8 per million.
    expect(pico(res.headers.get('x-service-cost-usd')!)).toBe(100n * 2_000_000n + 10n * 8_000_000n + 2n * search);
  });
});
