// The OpenAI-compatible surface end to end: the production build (lean node:http path AND the Next
// route handlers) in front of two fake upstreams, driven by the official `openai` SDK and, where the
// wire matters, by raw fetch. Real PostgreSQL and Redis underneath.

import { randomBytes } from 'node:crypto';
import OpenAI, { APIError, AuthenticationError, BadRequestError, InternalServerError, PermissionDeniedError, RateLimitError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type GatewayMode, type RunningGateway } from '../support/gateway';
import { DEFAULT_REPLY, TOOL_CALL_ARGUMENTS, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { waitFor } from '../support/accounts';
import { createKey, revokeKey, setLimits, setStatus } from '@/lib/accounts/queries';
import { hashPassword } from '@/lib/accounts/password';
import { creditBalance } from '@/lib/billing/ledger';
import { usdToPico } from '@/lib/money';
import type { TierName } from '@/lib/config';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const DIMS = { 'bge-m3': 1024, 'text-embedding-3-small': 1536 };
const COST_HEADERS = ['x-service-cost-usd', 'x-service-cost-cny', 'x-service-model-id', 'x-service-latency-ms', 'x-service-provider', 'x-request-id'];
/** gpt-4o-mini prices in pico-USD per token (0.15 and 0.6 USD per million). */
const MINI_IN = 150_000n;
const MINI_OUT = 600_000n;
const PICO = 10n ** 12n;

let db: Awaited<ReturnType<typeof getDb>>;
let up1: FakeUpstream;
let up2: FakeUpstream;
const gateways = {} as Record<GatewayMode, { gw: RunningGateway; maintenance: RunningGateway }>;
let passwordHash: string;

interface TestAccount {
  userId: string;
  apiKey: string;
  keyId: string;
}

/**
 * Like tests/support/accounts.ts createAccount (same library calls for balance, limits and keys) but
 * with one password hash for all: bcrypt per account would cost ~200 ms each.
 */
async function createAccount(opts: { tier?: TierName; balanceUsd?: string; limits?: Parameters<typeof setLimits>[1] } = {}): Promise<TestAccount> {
  const user = await db.user.create({ data: { email: `oa-${randomBytes(6).toString('hex')}@example.com`, passwordHash, tier: opts.tier ?? 'free' } });
  if (opts.balanceUsd) await creditBalance(user.id, 'admin_credit', usdToPico(opts.balanceUsd), { note: 'test' });
  if (opts.limits) await setLimits(user.id, opts.limits);
  const key = await createKey(user.id, 'test');
  return { userId: user.id, apiKey: key.key, keyId: key.id };
}

beforeAll(async () => {
  db = await getDb();
  passwordHash = await hashPassword('correct-horse-9');
  [up1, up2] = await Promise.all([startFakeUpstream({ dims: DIMS }), startFakeUpstream({ dims: DIMS })]);
  const config = testConfig({ openaiUrls: [up1.url, up2.url] });
  // Short upstream timeouts keep the timeout-fallback tests quick.
  for (const ch of config.channels as { timeouts: Record<string, number>; region?: string }[]) {
    ch.timeouts = { connect_ms: 1000, first_byte_ms: 1000, idle_ms: 1000 };
    // Both channels in one region: a request's service.region (a spec field) is honoured, not only accepted.
    ch.region = 'eu';
  }
  // All four gateways start in parallel: each mode, plus one in maintenance per mode.
  const start = async (mode: GatewayMode) => {
    const [gw, maintenance] = await Promise.all([startGateway({ config, mode }), startGateway({ config: { ...config, maintenance: true }, mode })]);
    gateways[mode] = { gw, maintenance };
  };
  await Promise.all([start('lean'), start('next')]);
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).flatMap((g) => [g.gw.stop(), g.maintenance.stop()]));
  await Promise.all([up1?.close(), up2?.close()]);
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

/** Exact decimal text of a pico-USD amount, as the gateway writes it. */
function picoText(pico: bigint): string {
  const frac = (pico % PICO).toString().padStart(12, '0').replace(/0+$/, '');
  return `${pico / PICO}${frac ? `.${frac}` : ''}`;
}

function expectOpenAIEnvelope(body: unknown, code: string): { message: string; type: string; param: unknown; code: unknown } {
  const err = (body as { error: { message: string; type: string; param: unknown; code: unknown } }).error;
  expect(Object.keys(err).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof err.message).toBe('string');
  expect(err.message.length).toBeGreaterThan(0);
  expect(typeof err.type).toBe('string');
  expect(err.code).toBe(code);
  return err;
}

function expectServiceHeaders(headers: Headers): void {
  for (const h of COST_HEADERS) expect(headers.get(h), h).not.toBeNull();
  expect(headers.get('x-request-id')).toMatch(/^req_/);
  expect(headers.get('x-service-latency-ms')).toMatch(/^\d+$/);
}

/** Reads an SSE body: the raw lines and the parsed data payloads. */
async function readSse(res: Response): Promise<{ lines: string[]; data: string[] }> {
  const text = await res.text();
  const lines = text.split('\n');
  return { lines, data: lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)) };
}

describe.each(['lean', 'next'] as GatewayMode[])('OpenAI-compatible surface (%s)', (mode) => {
  let gw: RunningGateway;
  let maintenance: RunningGateway;
  /** Warms the gateway up. */
  let shared: TestAccount;
  /** Sends the requests that reset the circuit breakers between fallback tests. */
  let healer: TestAccount;

  const client = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  const post = (path: string, apiKey: string | null, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };
  const upstreamCalls = () => up1.requests.length + up2.requests.length;

  /** Closes both channels' breakers again (a success resets a channel's failure count). */
  async function healBreakers(): Promise<void> {
    const c = client(healer.apiKey);
    const req = { model: 'deepseek-chat', messages: [{ role: 'user' as const, content: 'heal' }] };
    up1.reset();
    up2.reset();
    await c.chat.completions.create(req); // openai-1 succeeds
    up1.queue({ type: 'status', status: 500 });
    await c.chat.completions.create(req); // openai-1 fails once, openai-2 succeeds
    await c.chat.completions.create(req); // openai-1 succeeds again
    up1.reset();
    up2.reset();
  }

  beforeAll(async () => {
    ({ gw, maintenance } = gateways[mode]);
    [shared, healer] = await Promise.all([createAccount({ tier: 'pro', balanceUsd: '50' }), createAccount({ tier: 'pro', balanceUsd: '10' })]);
    // Warm the gateway's tokenizer (loaded on first use by the no-usage estimate and service-auto).
    up1.queue({ type: 'no-usage' });
    await client(shared.apiKey).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'warm up' }] });
  });

  beforeEach(() => {
    up1.reset();
    up2.reset();
  });

  describe('chat completions, non-streaming', () => {
    it('answers every spec field, forwards OpenAI fields unchanged and keeps `service` away from the upstream', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const body = {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Say hello' },
        ],
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 64,
        stop: ['\n\nEND', 'STOP'],
        seed: 42,
        user: 'end-user-7',
        logit_bias: { '50256': -100 },
        presence_penalty: 0.5,
        metadata: { trace: 'abc' },
        service: { region: 'eu', task: 'chat' },
      };
      const { data, response } = await client(acct.apiKey)
        .chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();

      expect(response.status).toBe(200);
      expect(data.id).toMatch(/^chatcmpl-/);
      expect(data.object).toBe('chat.completion');
      expect(Number.isInteger(data.created)).toBe(true);
      expect(data.model).toBe('gpt-4o-mini');
      expect(data.choices).toHaveLength(1);
      expect(data.choices[0].index).toBe(0);
      expect(data.choices[0].message.role).toBe('assistant');
      expect(data.choices[0].message.content).toBe(DEFAULT_REPLY);
      expect(data.choices[0].finish_reason).toBe('stop');
      const usage = data.usage!;
      expect(usage.prompt_tokens).toBeGreaterThan(0);
      expect(usage.completion_tokens).toBeGreaterThan(0);
      expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);

      const cost = BigInt(usage.prompt_tokens) * MINI_IN + BigInt(usage.completion_tokens) * MINI_OUT;
      const service = (data as unknown as { service: { channel: string; latency_ms: number; cost_usd: number } }).service;
      expect(service.channel).toBe('openai-1');
      expect(Number.isInteger(service.latency_ms)).toBe(true);
      expect(typeof service.cost_usd).toBe('number');
      expect(service.cost_usd).toBeCloseTo(Number(picoText(cost)), 12);

      const h = response.headers;
      expectServiceHeaders(h);
      expect(h.get('x-service-cost-usd')).toBe(picoText(cost));
      expect(h.get('x-service-cost-cny')).toBe(picoText((cost * 72n + 5n) / 10n));
      expect(h.get('x-service-model-id')).toBe('gpt-4o-mini');
      expect(h.get('x-service-provider')).toBe('openai-1');
      expect(h.get('x-ratelimit-limit-requests')).toBe('60');

      expect(up1.requests).toHaveLength(1);
      expect(up2.requests).toHaveLength(0);
      const sent = up1.requests[0];
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe('Bearer upstream-secret-openai-1');
      const { service: _dropped, ...forwarded } = body;
      expect(sent.json).toEqual(forwarded);
      expect(sent.body).not.toContain('"service"');
      expect(sent.body).not.toContain(acct.apiKey);
    });

    it("sends the client's own bytes upstream (formatting kept); a stream only gains stream_options.include_usage", async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const text = '{"model": "gpt-4o-mini",\n "messages": [{"role": "user", "content": "Hi \\u00e9"}], "temperature": 1.0, "max_tokens": 1e2}';
      const res = await post('/v1/chat/completions', acct.apiKey, text);
      expect(res.status).toBe(200);
      expect(up1.requests[0].body).toBe(text);
      const streamText = `${text.slice(0, -1)}, "stream": true}`;
      const streamed = await post('/v1/chat/completions', acct.apiKey, streamText);
      expect(streamed.status).toBe(200);
      expect(await streamed.text()).toContain('data: [DONE]');
      expect(up1.requests[1].body).toBe(`${streamText.slice(0, -1)},"stream_options":{"include_usage":true}}`);
      // A body too large to arrive with the headers (read as it streams in) goes byte for byte too.
      const long = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"${'é… '.repeat(60_000)}"}]}`;
      const big = await post('/v1/chat/completions', acct.apiKey, long);
      expect(big.status).toBe(200);
      expect(up1.requests[2].body).toBe(long);
    });

    it('a body with "model" twice goes upstream as the model it was priced for (re-serialised, one "model")', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const messages = [{ role: 'user', content: 'Hi' }];
      const text = `{"model":"gpt-4o","messages":${JSON.stringify(messages)},"model":"gpt-4o-mini"}`;
      const res = await post('/v1/chat/completions', acct.apiKey, text);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-model-id')).toBe('gpt-4o-mini');
      expect(up1.requests).toHaveLength(1);
      expect(up1.requests[0].body.match(/"model"/g)).toHaveLength(1);
      expect(up1.requests[0].json).toEqual({ model: 'gpt-4o-mini', messages });
    });

    it('response_format json_object reaches the upstream and its JSON reply comes back', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const res = await client(acct.apiKey).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Answer in JSON' }],
        response_format: { type: 'json_object' },
      });
      expect(JSON.parse(res.choices[0].message.content!)).toEqual({ answer: 'ok' });
      expect((up1.requests[0].json as { response_format: unknown }).response_format).toEqual({ type: 'json_object' });
    });

    it('tool calls and tool messages round-trip', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const tools: OpenAI.ChatCompletionTool[] = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ];
      const c = client(acct.apiKey);
      const first = await c.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools,
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.type).toBe('function');
      expect(call.function.name).toBe('get_weather');
      expect(call.function.arguments).toBe(TOOL_CALL_ARGUMENTS);
      expect(up1.requests[0].json).toMatchObject({ tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } });

      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'Weather in Paris?' },
        first.choices[0].message as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
      ];
      const second = await c.chat.completions.create({ model: 'gpt-4o-mini', messages, tools, tool_choice: 'auto' });
      expect(second.choices[0].message.content).toBe('The tool said: sunny, 21C');
      const sent = up1.requests[1].json as { messages: unknown[]; tool_choice: unknown };
      expect(sent.messages).toEqual(JSON.parse(JSON.stringify(messages)));
      expect(sent.tool_choice).toBe('auto');
    });

    it('without upstream usage (no-usage) estimates the tokens and logs tokensEstimated', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      up1.queue({ type: 'no-usage' });
      const { data, response } = await client(acct.apiKey)
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count me' }] })
        .withResponse();
      expect(data.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(data.usage!.completion_tokens).toBeGreaterThan(0);
      expect(Number(response.headers.get('x-service-cost-usd'))).toBeGreaterThan(0);
      const id = response.headers.get('x-request-id')!;
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id } }));
      expect(row.tokensEstimated).toBe(true);
      expect(row.promptTokens).toBe(data.usage!.prompt_tokens);
      expect(row.completionTokens).toBe(data.usage!.completion_tokens);
    });
  });

  describe('chat completions, streaming', () => {
    it('SDK stream: deltas concatenate to the reply, no usage chunk unless asked, usage requested upstream', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const stream = await client(acct.apiKey).chat.completions.create({
        ...hello,
        stream: true,
        temperature: 0.2,
        max_tokens: 100,
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      let text = '';
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      expect(text).toBe(DEFAULT_REPLY);
      expect(chunks.every((c) => !c.usage)).toBe(true);
      expect(chunks.every((c) => c.choices.length > 0)).toBe(true);
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
      expect(chunks[0].id).toMatch(/^chatcmpl-/);
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
      const sent = up1.requests[0].json as Record<string, unknown>;
      expect(sent.stream).toBe(true);
      expect(sent.stream_options).toEqual({ include_usage: true });
      expect(sent.temperature).toBe(0.2);
      expect(sent.max_tokens).toBe(100);
    });

    it('wire format: data: lines only, [DONE] last, headers present; include_usage adds a priced usage chunk', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const res = await post('/v1/chat/completions', acct.apiKey, {
        ...hello,
        stream: true,
        stream_options: { include_usage: true },
        service: { region: 'eu' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expectServiceHeaders(res.headers);
      expect(res.headers.get('x-service-model-id')).toBe('gpt-4o-mini');
      expect(res.headers.get('x-service-provider')).toBe('openai-1');
      expect(res.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
      const { lines, data } = await readSse(res);
      for (const line of lines) expect(line === '' || line.startsWith('data: '), line).toBe(true);
      expect(data.at(-1)).toBe('[DONE]');
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as OpenAI.ChatCompletionChunk & { usage?: Record<string, number> });
      const usageChunk = chunks.at(-1)!;
      expect(usageChunk.choices).toEqual([]);
      expect(usageChunk.id).toBe(chunks[0].id);
      expect(usageChunk.object).toBe('chat.completion.chunk');
      const u = usageChunk.usage!;
      expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
      const cost = BigInt(u.prompt_tokens) * MINI_IN + BigInt(u.completion_tokens) * MINI_OUT;
      expect(u.cost_usd).toBeCloseTo(Number(picoText(cost)), 12);
      expect(u.cost_cny).toBeCloseTo(Number(picoText((cost * 72n + 5n) / 10n)), 12);
      expect(chunks.slice(0, -1).every((c) => c.choices.length > 0 && !c.usage)).toBe(true);
      expect(
        chunks
          .slice(0, -1)
          .map((c) => c.choices[0].delta.content ?? '')
          .join(''),
      ).toBe(DEFAULT_REPLY);
      const sent = up1.requests[0].json as Record<string, unknown>;
      expect(sent).not.toHaveProperty('service');
      expect(sent.stream_options).toEqual({ include_usage: true });
    });

    it('SDK stream with include_usage: the final chunk carries usage', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const stream = await client(acct.apiKey).chat.completions.create({
        ...hello,
        stream: true,
        stream_options: { include_usage: true },
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    });

    it('streamed tool calls: argument fragments concatenate to the call', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const stream = await client(acct.apiKey).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
        stream: true,
      });
      let name = '';
      let args = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        for (const tc of choice?.delta?.tool_calls ?? []) {
          name += tc.function?.name ?? '';
          args += tc.function?.arguments ?? '';
        }
        finish = choice?.finish_reason ?? finish;
      }
      expect(name).toBe('get_weather');
      expect(args).toBe(TOOL_CALL_ARGUMENTS);
      expect(finish).toBe('tool_calls');
    });

    it('without upstream usage the streamed usage is estimated and the log row says so', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      up1.queue({ type: 'no-usage' });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, stream: true, stream_options: { include_usage: true } });
      const { data } = await readSse(res);
      expect(data.at(-1)).toBe('[DONE]');
      const usage = (JSON.parse(data.at(-2)!) as { usage: { prompt_tokens: number; completion_tokens: number; cost_usd: number } }).usage;
      expect(usage.prompt_tokens).toBeGreaterThan(0);
      expect(usage.completion_tokens).toBeGreaterThan(0);
      expect(usage.cost_usd).toBeGreaterThan(0);
      const id = res.headers.get('x-request-id')!;
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id } }));
      expect(row.tokensEstimated).toBe(true);
      expect(row.stream).toBe(true);
      expect(row.completionTokens).toBe(usage.completion_tokens);
    });
  });

  describe('validation (400 in the OpenAI envelope, before any upstream call)', () => {
    let acct: TestAccount;
    beforeAll(async () => {
      acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    });

    const cases: [string, Record<string, unknown>, string, string][] = [
      ['messages missing', { model: 'gpt-4o-mini' }, 'invalid_request', 'messages'],
      ['messages empty', { model: 'gpt-4o-mini', messages: [] }, 'invalid_request', 'messages'],
      ['temperature above 2', { ...{ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, temperature: 2.5 }, 'invalid_request', 'temperature'],
      ['temperature below 0', { ...{ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, temperature: -0.1 }, 'invalid_request', 'temperature'],
      ['unknown model', { model: 'gpt-9-ultra', messages: [{ role: 'user', content: 'x' }] }, 'model_not_found', 'model'],
      ['model missing', { messages: [{ role: 'user', content: 'x' }] }, 'invalid_request', 'model'],
    ];

    it.each(cases)('%s -> 400', async (_name, body, code, param) => {
      const res = await post('/v1/chat/completions', acct.apiKey, body);
      expect(res.status).toBe(400);
      expectServiceHeaders(res.headers);
      expect(res.headers.get('x-should-retry')).toBe('false');
      const err = expectOpenAIEnvelope(await res.json(), code);
      expect(err.type).toBe('invalid_request_error');
      expect(err.param).toBe(param);
      expect(upstreamCalls()).toBe(0);

      const sdkErr = await client(acct.apiKey)
        .chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(sdkErr).toBeInstanceOf(BadRequestError);
      expect((sdkErr as BadRequestError).code).toBe(code);
      expect(upstreamCalls()).toBe(0);
    });

    it('temperature 0 and 2 (the bounds) are accepted and forwarded', async () => {
      const c = client(acct.apiKey);
      for (const temperature of [0, 2]) await c.chat.completions.create({ ...(hello as OpenAI.ChatCompletionCreateParamsNonStreaming), temperature });
      expect(up1.requests.map((r) => (r.json as { temperature: number }).temperature)).toEqual([0, 2]);
    });

    it('a body over 4 MiB -> 413, no upstream call', async () => {
      const big = { ...hello, messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024 + 10) }] };
      const res = await post('/v1/chat/completions', acct.apiKey, big);
      expect(res.status).toBe(413);
      expectServiceHeaders(res.headers);
      expectOpenAIEnvelope(await res.json(), 'body_too_large');
      expect(upstreamCalls()).toBe(0);
    });

    it('a chunked body (no Content-Length) over 4 MiB is refused with 413 as soon as it passes the limit', async () => {
      const piece = new Uint8Array(256 * 1024).fill(0x20);
      let sent = 0;
      // Sends 5 MiB, then keeps the upload open: the gateway must not wait for the end of the body.
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 5 * 1024 * 1024) return;
          sent += piece.length;
          controller.enqueue(piece);
        },
      });
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), 5000);
      try {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.apiKey}` },
          body,
          duplex: 'half',
          signal: abort.signal,
        } as RequestInit);
        expect(res.status).toBe(413);
        expectServiceHeaders(res.headers);
        expectOpenAIEnvelope(await res.json(), 'body_too_large');
      } finally {
        clearTimeout(timer);
        abort.abort();
      }
      expect(upstreamCalls()).toBe(0);
    });

    it('malformed JSON -> 400 invalid_json', async () => {
      const res = await post('/v1/chat/completions', acct.apiKey, '{"model": "gpt-4o-mini", "messages": [');
      expect(res.status).toBe(400);
      expectOpenAIEnvelope(await res.json(), 'invalid_json');
      expect(upstreamCalls()).toBe(0);
    });
  });

  describe('fallback and circuit breaker', () => {
    let acct: TestAccount;
    beforeAll(async () => {
      acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    });

    const fallbackCases: [string, Parameters<FakeUpstream['queue']>[0]][] = [
      ['upstream 500', { type: 'status', status: 500 }],
      ['upstream 503', { type: 'status', status: 503 }],
      ['upstream 429', { type: 'status', status: 429 }],
      ['connection refused', { type: 'refuse' }],
      ['first-byte timeout', { type: 'hang' }],
      ['malformed JSON reply', { type: 'malformed' }],
      ['reply cut off mid-body', { type: 'cut', afterChunks: 0 }],
    ];

    it.each(fallbackCases)('%s on openai-1 -> served by openai-2', async (_name, fault) => {
      up1.queue(fault);
      const { data, response } = await client(acct.apiKey)
        .chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      expect(data.choices[0].message.content).toBe(DEFAULT_REPLY);
      expect(response.headers.get('x-service-provider')).toBe('openai-2');
      expect(response.headers.get('x-service-model-id')).toBe('gpt-4o-mini');
      expect((data as unknown as { service: { channel: string } }).service.channel).toBe('openai-2');
      expect(up1.requests).toHaveLength(1);
      expect(up2.requests).toHaveLength(1);
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: response.headers.get('x-request-id')! } }));
      expect(row.channel).toBe('openai-2');
      expect((row.attempts as { channel: string; ok: boolean }[]).map((a) => [a.channel, a.ok])).toEqual([
        ['openai-1', false],
        ['openai-2', true],
      ]);
      await healBreakers();
    });

    it('streaming: a failure before the first byte falls back', async () => {
      up1.queue({ type: 'refuse' });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, stream: true });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-provider')).toBe('openai-2');
      const { data } = await readSse(res);
      expect(data.at(-1)).toBe('[DONE]');
      expect(
        data
          .slice(0, -1)
          .map((d) => (JSON.parse(d) as OpenAI.ChatCompletionChunk).choices[0]?.delta?.content ?? '')
          .join(''),
      ).toBe(DEFAULT_REPLY);
      await healBreakers();
    });

    it('streaming: an upstream that ends before sending anything falls back', async () => {
      up1.queue({ type: 'cut', afterChunks: 0 });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, stream: true });
      expect(res.headers.get('x-service-provider')).toBe('openai-2');
      const { data } = await readSse(res);
      expect(data.at(-1)).toBe('[DONE]');
      expect(up2.requests).toHaveLength(1);
      await healBreakers();
    });

    it('streaming: a complete reply without the upstream [DONE] still ends with data: [DONE]', async () => {
      up1.queue({ type: 'no-done' });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, stream: true });
      const { data } = await readSse(res);
      expect(data.at(-1)).toBe('[DONE]');
      expect(
        data
          .slice(0, -1)
          .map((d) => (JSON.parse(d) as OpenAI.ChatCompletionChunk).choices[0]?.delta?.content ?? '')
          .join(''),
      ).toBe(DEFAULT_REPLY);
      expect(up2.requests).toHaveLength(0);
    });

    it('streaming: a break after the first byte ends with an error chunk, no fallback', async () => {
      up1.setReply('one two three four five six seven eight nine ten');
      up1.queue({ type: 'cut', afterChunks: 3 });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, stream: true });
      expect(res.status).toBe(200);
      const { lines, data } = await readSse(res);
      for (const line of lines) expect(line === '' || line.startsWith('data: '), line).toBe(true);
      expect(data).not.toContain('[DONE]');
      const last = JSON.parse(data.at(-1)!) as { error: { message: string; type: string; code: string } };
      expect(last.error.code).toBe('upstream_error');
      expect(typeof last.error.message).toBe('string');
      expect(data.length).toBeGreaterThan(1);
      expect(up2.requests).toHaveLength(0);

      // The SDK surfaces the error chunk as an APIError.
      up1.queue({ type: 'cut', afterChunks: 3 });
      const stream = await client(acct.apiKey).chat.completions.create({ ...hello, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
      const err = await (async () => {
        for await (const _ of stream) {
          /* consume */
        }
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect(up2.requests).toHaveLength(0);
      await healBreakers();
    });

    it('a stall after the first byte ends with an error chunk at the idle timeout', async () => {
      up1.queue({ type: 'stall', afterChunks: 2 });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, stream: true });
      const { data } = await readSse(res);
      expect(data).not.toContain('[DONE]');
      expect((JSON.parse(data.at(-1)!) as { error: { code: string } }).error.code).toBe('upstream_error');
      expect(up2.requests).toHaveLength(0);
      await healBreakers();
    });

    it('a 4xx other than 429 is returned as is and not retried', async () => {
      const upstreamError = {
        error: { message: 'This model does not support that parameter.', type: 'invalid_request_error', param: 'logprobs', code: 'unsupported_parameter' },
      };
      up1.queue({ type: 'status', status: 400, body: upstreamError });
      const err = (await client(acct.apiKey)
        .chat.completions.create({ ...hello, logprobs: true } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e)) as BadRequestError;
      expect(err).toBeInstanceOf(BadRequestError);
      expect(err.message).toContain('This model does not support that parameter.');
      expect(err.code).toBe('unsupported_parameter');
      expect(err.param).toBe('logprobs');
      expect(err.headers.get('x-service-provider')).toBe('openai-1');
      expect(err.headers.get('x-request-id')).toMatch(/^req_/);
      expect(up1.requests).toHaveLength(1);
      expect(up2.requests).toHaveLength(0);
    });

    it('model fallback: every channel of gpt-4o-mini failed -> deepseek-chat served, headers name it', async () => {
      up1.queue({ type: 'status', status: 502 });
      up2.queue({ type: 'status', status: 502 });
      const { data, response } = await client(acct.apiKey)
        .chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      expect(data.choices[0].message.content).toBe(DEFAULT_REPLY);
      expect(response.headers.get('x-service-model-id')).toBe('deepseek-chat');
      expect(response.headers.get('x-service-provider')).toBe('openai-1');
      expect(up1.requests.map((r) => (r.json as { model: string }).model)).toEqual(['gpt-4o-mini', 'deepseek-chat']);
      expect(up2.requests.map((r) => (r.json as { model: string }).model)).toEqual(['gpt-4o-mini']);
      // Priced with the model that served: deepseek-chat at 0.27 / 1.1 USD per million.
      const u = data.usage!;
      expect(response.headers.get('x-service-cost-usd')).toBe(picoText(BigInt(u.prompt_tokens) * 270_000n + BigInt(u.completion_tokens) * 1_100_000n));
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: response.headers.get('x-request-id')! } }));
      expect(row.modelRequested).toBe('gpt-4o-mini');
      expect(row.modelServed).toBe('deepseek-chat');
      await healBreakers();
    });

    it('every channel failed -> 502 all_channels_failed (InternalServerError), with the service headers', async () => {
      up1.setDefault({ type: 'status', status: 503 });
      up2.setDefault({ type: 'status', status: 503 });
      const res = await post('/v1/chat/completions', acct.apiKey, { ...hello, model: 'deepseek-chat' });
      expect(res.status).toBe(502);
      expectServiceHeaders(res.headers);
      expect(res.headers.get('x-service-provider')).toBe('none');
      expect(res.headers.get('x-service-cost-usd')).toBe('0');
      expect(res.headers.get('x-ratelimit-limit-requests')).toBe('300');
      expectOpenAIEnvelope(await res.json(), 'all_channels_failed');
      expect(up1.requests).toHaveLength(1);
      expect(up2.requests).toHaveLength(1);
      const err = await client(acct.apiKey)
        .chat.completions.create({ ...hello, model: 'deepseek-chat' } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InternalServerError);
      expect((err as InternalServerError).status).toBe(502);
      expect((err as InternalServerError).code).toBe('all_channels_failed');
      up1.setDefault({ type: 'ok' });
      up2.setDefault({ type: 'ok' });
      await healBreakers();
    });

    it('circuit breaker: after 3 failures openai-1 is skipped until the cool-down, then tried again', async () => {
      up1.setDefault({ type: 'status', status: 500 });
      const c = client(acct.apiKey);
      for (let i = 0; i < 3; i++) {
        const { response } = await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
        expect(response.headers.get('x-service-provider')).toBe('openai-2');
      }
      expect(up1.requests).toHaveLength(3);
      const openedAt = Date.now();
      for (let i = 0; i < 2; i++) {
        const { response } = await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
        expect(response.headers.get('x-service-provider')).toBe('openai-2');
      }
      expect(up1.requests).toHaveLength(3); // skipped: not even a connection attempt
      expect(up2.requests).toHaveLength(5);

      up1.setDefault({ type: 'ok' });
      await new Promise((r) => setTimeout(r, Math.max(0, openedAt + 2200 - Date.now())));
      const { response } = await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
      expect(response.headers.get('x-service-provider')).toBe('openai-1');
      expect(up1.requests).toHaveLength(4);
    });
  });

  describe('service-auto', () => {
    it('with service.task "code" picks a code-tagged model, and the log row explains why', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const body = { model: 'service-auto', messages: [{ role: 'user', content: 'Write a sort function' }], service: { task: 'code', region: 'eu' } };
      const { data, response } = await client(acct.apiKey)
        .chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      // On the free tier the code-tagged models are deepseek-chat (gpt-4o is pro+).
      expect(response.headers.get('x-service-model-id')).toBe('deepseek-chat');
      expect(data.model).toBe('deepseek-chat');
      const sent = up1.requests[0].json as Record<string, unknown>;
      expect(sent.model).toBe('deepseek-chat');
      expect(sent).not.toHaveProperty('service');
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: response.headers.get('x-request-id')! } }));
      expect(row.modelRequested).toBe('service-auto');
      expect(row.modelServed).toBe('deepseek-chat');
      expect(row.routeReason).toMatch(/deepseek-chat/);
      expect(row.routeReason).toMatch(/code/);
    });

    it('without a task hint picks the cheapest fitting model', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const { response } = await client(acct.apiKey)
        .chat.completions.create({ model: 'service-auto', messages: [{ role: 'user', content: 'Hi' }] })
        .withResponse();
      expect(response.headers.get('x-service-model-id')).toBe('gpt-4o-mini');
    });
  });

  describe('embeddings', () => {
    it('string input, encoding_format float: one vector of the model dimensions', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const { data, response } = await client(acct.apiKey)
        .embeddings.create({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'float' })
        .withResponse();
      expect(data.object).toBe('list');
      expect(data.model).toBe('text-embedding-3-small');
      expect(data.data).toHaveLength(1);
      expect(data.data[0].object).toBe('embedding');
      expect(data.data[0].index).toBe(0);
      expect(data.data[0].embedding).toHaveLength(1536);
      expect(data.usage.prompt_tokens).toBeGreaterThan(0);
      expect(data.usage.total_tokens).toBe(data.usage.prompt_tokens);
      expectServiceHeaders(response.headers);
      expect(response.headers.get('x-service-model-id')).toBe('text-embedding-3-small');
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1000');
      expect(up1.requests[0].path).toBe('/v1/embeddings');
    });

    it('array input with the SDK default (base64) decodes to the model dimensions, equal to the float vectors', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const input = ['first text', 'second text', '第三个'];
      const c = client(acct.apiKey);
      const b64 = await c.embeddings.create({ model: 'bge-m3', input });
      expect(b64.data.map((d) => d.index)).toEqual([0, 1, 2]);
      for (const d of b64.data) expect(d.embedding).toHaveLength(1024);
      const sentFormat = (up1.requests[0].json as { encoding_format?: string }).encoding_format;
      expect(['float', 'base64', undefined]).toContain(sentFormat);

      const raw = await post('/v1/embeddings', acct.apiKey, { model: 'bge-m3', input, encoding_format: 'base64' });
      const rawBody = (await raw.json()) as { data: { embedding: unknown }[] };
      expect(typeof rawBody.data[0].embedding).toBe('string');

      const floats = await c.embeddings.create({ model: 'bge-m3', input, encoding_format: 'float' });
      for (let i = 0; i < input.length; i++) {
        expect(Array.from(b64.data[i].embedding)).toEqual(floats.data[i].embedding);
      }
    });

    it('the OpenAI `dimensions` parameter is forwarded and shortens the vectors', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const c = client(acct.apiKey);
      const res = await c.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 256 });
      for (const d of res.data) expect(d.embedding).toHaveLength(256);
      expect((up1.requests[0].json as { dimensions: number }).dimensions).toBe(256);
      // More than the model has is the caller's mistake: 400 before any upstream call.
      up1.reset();
      const err = await c.embeddings.create({ model: 'text-embedding-3-small', input: 'a', dimensions: 4096 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe('dimensions');
      expect(upstreamCalls()).toBe(0);
    });

    it('101 strings -> 400 before any upstream call; 100 are fine', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const c = client(acct.apiKey);
      const err = await c.embeddings.create({ model: 'bge-m3', input: Array.from({ length: 101 }, (_, i) => `t${i}`) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe('input');
      expect(upstreamCalls()).toBe(0);
      const ok = await c.embeddings.create({ model: 'bge-m3', input: Array.from({ length: 100 }, (_, i) => `t${i}`) });
      expect(ok.data).toHaveLength(100);
    });

    it('a chat model on the embeddings endpoint is refused', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const err = await client(acct.apiKey)
        .embeddings.create({ model: 'gpt-4o-mini', input: 'x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect(upstreamCalls()).toBe(0);
    });
  });

  describe('GET /v1/models', () => {
    it("lists only the tier's models with the extension fields; strict Accept removes them", async () => {
      const free = await createAccount({ balanceUsd: '1' });
      const pro = await createAccount({ tier: 'pro', balanceUsd: '1' });
      const freeIds: string[] = [];
      for await (const m of client(free.apiKey).models.list()) freeIds.push(m.id);
      expect(freeIds.sort()).toEqual(['bge-m3', 'deepseek-chat', 'gpt-4o-mini', 'text-embedding-3-small']);
      const proIds: string[] = [];
      for await (const m of client(pro.apiKey).models.list()) proIds.push(m.id);
      expect(proIds).toContain('gpt-4o');

      const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${free.apiKey}` } });
      expect(res.status).toBe(200);
      expectServiceHeaders(res.headers);
      const list = (await res.json()) as { object: string; data: Record<string, unknown>[] };
      expect(list.object).toBe('list');
      const mini = list.data.find((m) => m.id === 'gpt-4o-mini')!;
      expect(mini).toMatchObject({
        object: 'model',
        owned_by: 'openai',
        context_window: 128000,
        tags: ['chat', 'fast'],
        input_price_usd_per_million: 0.15,
        output_price_usd_per_million: 0.6,
      });
      expect(Number.isInteger(mini.created)).toBe(true);

      const strict = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${free.apiKey}`, accept: 'application/openai+json' } });
      const strictList = (await strict.json()) as { data: Record<string, unknown>[] };
      expect(strictList.data.length).toBe(list.data.length);
      for (const m of strictList.data) expect(Object.keys(m).sort()).toEqual(['created', 'id', 'object', 'owned_by']);
      expect(upstreamCalls()).toBe(0);
    });

    it('a free account requesting gpt-4o (pro+) -> 403 model_not_allowed', async () => {
      const free = await createAccount({ balanceUsd: '1' });
      const err = await client(free.apiKey)
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PermissionDeniedError);
      expect((err as PermissionDeniedError).code).toBe('model_not_allowed');
      expect((err as PermissionDeniedError).headers.get('x-should-retry')).toBe('false');
      expect(upstreamCalls()).toBe(0);
    });
  });

  describe('errors per status map to the SDK exception classes', () => {
    it('401: missing, malformed and unknown keys', async () => {
      const missing = await post('/v1/chat/completions', null, hello);
      expect(missing.status).toBe(401);
      expectServiceHeaders(missing.headers);
      expectOpenAIEnvelope(await missing.json(), 'invalid_api_key');

      for (const key of ['not-a-key', 'sk-gw-short', `sk-gw-${'A'.repeat(43)}`]) {
        const err = await client(key)
          .chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming)
          .catch((e: unknown) => e);
        expect(err, key).toBeInstanceOf(AuthenticationError);
        expect((err as AuthenticationError).code).toBe('invalid_api_key');
        expect((err as AuthenticationError).type).toBe('authentication_error');
      }
      const models = await client('sk-gw-nope')
        .models.list()
        .catch((e: unknown) => e);
      expect(models).toBeInstanceOf(AuthenticationError);
      expect(upstreamCalls()).toBe(0);
    });

    it('401: a revoked key is refused on the very next request', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const c = client(acct.apiKey);
      await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming); // now cached by the gateway
      await revokeKey(acct.userId, acct.keyId);
      const err = await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(up1.requests).toHaveLength(1);
    });

    it('402: a zero balance is refused with x-should-retry: false', async () => {
      const acct = await createAccount();
      const res = await post('/v1/chat/completions', acct.apiKey, hello);
      expect(res.status).toBe(402);
      expect(res.headers.get('x-should-retry')).toBe('false');
      expectServiceHeaders(res.headers);
      expectOpenAIEnvelope(await res.json(), 'insufficient_balance');
      const err = await client(acct.apiKey)
        .chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(402);
      expect(upstreamCalls()).toBe(0);
    });

    it('403: a suspended account is refused at once', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const c = client(acct.apiKey);
      await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming);
      await setStatus(acct.userId, 'suspended');
      const err = await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PermissionDeniedError);
      expect((err as PermissionDeniedError).code).toBe('account_suspended');
      expect((err as PermissionDeniedError).headers.get('x-should-retry')).toBe('false');
      expect(up1.requests).toHaveLength(1);
    });

    it('429: RateLimitError with type rate_limit and Retry-After', async () => {
      const acct = await createAccount({ balanceUsd: '10', limits: { rpm: 1 } });
      const c = client(acct.apiKey);
      await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const err = (await c.chat.completions.create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e)) as RateLimitError;
      expect(err).toBeInstanceOf(RateLimitError);
      expect(err.type).toBe('rate_limit');
      expect(err.code).toBe('rate_limit_exceeded');
      expect(err.message).toMatch(/1 requests per minute/);
      expect(err.headers.get('retry-after')).toMatch(/^\d+$/);
      for (const h of COST_HEADERS) expect(err.headers.get(h), h).not.toBeNull();
      expect(up1.requests).toHaveLength(1);
    });

    it('503: maintenance -> InternalServerError, with Retry-After', async () => {
      const acct = await createAccount({ balanceUsd: '10' });
      const err = (await new OpenAI({ baseURL: `${maintenance.url}/v1`, apiKey: acct.apiKey, maxRetries: 0 }).chat.completions
        .create(hello as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e)) as InternalServerError;
      expect(err).toBeInstanceOf(InternalServerError);
      expect(err.status).toBe(503);
      expect(err.code).toBe('maintenance');
      expect(err.headers.get('retry-after')).toMatch(/^\d+$/);
      for (const h of COST_HEADERS) expect(err.headers.get(h), h).not.toBeNull();
      expect(upstreamCalls()).toBe(0);
    });
  });
});
