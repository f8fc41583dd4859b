// The Anthropic Messages mirror (/v1/anthropic) end to end: the production build (lean node:http path
// and `next start`) in front of fake Anthropic upstreams, driven by the official @anthropic-ai/sdk and
// by raw fetch where bytes and headers matter.

import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db';
import { usdToPico } from '@/lib/money';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';
import { CACHE_TOKENS, DEFAULT_REPLY, countTokens, startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { startGateway, testConfig, type GatewayMode, type RunningGateway } from '../support/gateway';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';

// claude-sonnet-4-5 in testConfig, in pico-USD per token (USD per million x 10^6).
const SONNET = { input: 3_000_000n, output: 15_000_000n, cacheRead: 300_000n, cacheWrite: 3_750_000n };
const SONNET_NAME = 'claude-sonnet-4-5';
const HAIKU_NAME = 'claude-haiku-4-5'; // restricted to pro and above below
const CHANNEL_KEY_1 = 'upstream-secret-anthropic-1';
const CHANNEL_KEY_2 = 'upstream-secret-anthropic-2';
const UNKNOWN_KEY = `sk-gw-${'A'.repeat(43)}`;

let openaiFake: FakeUpstream;
let fakeA: FakeUpstream; // channel anthropic-1 (priority 10)
let fakeB: FakeUpstream; // channel anthropic-2 (priority 9)
const MODES: GatewayMode[] = ['lean', 'next'];
const gateways = new Map<GatewayMode, RunningGateway>();

beforeAll(async () => {
  [openaiFake, fakeA, fakeB] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
  countTokens('warm-up'); // the fakes' tokenizer loads on first use: not inside a channel's first-byte timeout
  const config = testConfig({ openaiUrls: [openaiFake.url], anthropicUrls: [fakeA.url, fakeB.url] });
  for (const m of config.models as Record<string, unknown>[]) {
    if (m.name === HAIKU_NAME) m.tiers = ['pro', 'vip', 'enterprise'];
    if (m.name === SONNET_NAME) m.fallback_models = [HAIKU_NAME];
  }
  // A stalled upstream is given up after 1 s of silence (keeps the client-disconnect test short).
  for (const c of config.channels as Record<string, unknown>[])
    if (c.protocol === 'anthropic') c.timeouts = { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 1000 };
  // Both production entry points, started side by side.
  const started = await Promise.all(MODES.map((mode) => startGateway({ config, mode })));
  MODES.forEach((mode, i) => gateways.set(mode, started[i]!));
});

afterAll(async () => {
  await Promise.all([...gateways.values()].map((gw) => gw.stop()));
  await Promise.all([openaiFake?.close(), fakeA?.close(), fakeB?.close()]);
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

beforeEach(() => {
  openaiFake.reset();
  fakeA.reset();
  fakeB.reset();
});

/** What the fake counts as input tokens: each message's text + 3, the system text + 3. */
const inputTokens = (userText: string, system?: string) => countTokens(userText) + 3 + (system ? countTokens(system) + 3 : 0);
const SYSTEM = 'You are a terse assistant. Answer in one sentence.';

async function logRow(where: { id?: string; userId?: string }) {
  const db = await getDb();
  return waitFor(() => db.requestLog.findFirst({ where, orderBy: { createdAt: 'desc' } }), 8000);
}

async function logRows(userId: string, n: number) {
  const db = await getDb();
  return waitFor(async () => {
    const rows = await db.requestLog.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
    return rows.length >= n ? rows : null;
  }, 8000);
}

const pico = (decimal: { toFixed(n: number): string }) => usdToPico(decimal.toFixed(12));

/** A fetch for the SDK that records what it sent and (a copy of) the raw bytes it received. */
function recordingFetch() {
  const calls: { headers: Headers; text: Promise<string> }[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    calls.push({ headers: new Headers(init?.headers), text: res.clone().text() });
    return res;
  };
  return { fetch: recording, calls };
}

describe.each(MODES)('Anthropic mirror (%s)', (mode) => {
  let gw: RunningGateway;
  let pro: TestAccount;
  let client: Anthropic;

  beforeAll(async () => {
    gw = gateways.get(mode)!;
    pro = await createAccount({ tier: 'pro', balanceUsd: '50' });
    client = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: pro.apiKey, maxRetries: 0 });
  });

  const post = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${gw.url}/v1/anthropic/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  /** A plain request that must be served by anthropic-1: also resets that channel's breaker count. */
  async function healthy(): Promise<void> {
    const { response } = await client.messages.create({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'ping' }] }).withResponse();
    expect(response.headers.get('x-service-provider')).toBe('anthropic-1');
  }

  const upstreamRequests = (): RecordedRequest[] => [...fakeA.requests, ...fakeB.requests];

  it('answers a non-streaming message through the SDK (apiKey), with request-id and the cost headers', async () => {
    const rec = recordingFetch();
    const sdk = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: pro.apiKey, maxRetries: 0, fetch: rec.fetch });
    const { data, response } = await sdk.messages
      .create({ model: SONNET_NAME, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    expect(data.type).toBe('message');
    expect(data.content[0]).toMatchObject({ type: 'text', text: DEFAULT_REPLY });
    expect(data.usage.input_tokens).toBe(inputTokens('Hello'));
    expect(data.usage.output_tokens).toBe(countTokens(DEFAULT_REPLY));
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
    expect(response.headers.get('x-service-provider')).toBe('anthropic-1');
    expect(response.headers.get('x-service-model-id')).toBe(SONNET_NAME);
    expect(Number(response.headers.get('x-service-cost-usd'))).toBeGreaterThan(0);
    expect(response.headers.get('x-service-cost-cny')).toBeTruthy();

    expect(fakeA.requests).toHaveLength(1);
    const seen = fakeA.requests[0]!;
    expect(seen.path).toBe('/v1/messages');
    expect(seen.headers['x-api-key']).toBe(CHANNEL_KEY_1);
    expect(seen.headers.authorization).toBeUndefined();
    // Whatever version the SDK speaks goes upstream unchanged.
    const sent = rec.calls[0]!.headers;
    expect(sent.get('authorization')).toBe(`Bearer ${pro.apiKey}`);
    expect(sent.get('anthropic-version')).toBeTruthy();
    expect(seen.headers['anthropic-version']).toBe(sent.get('anthropic-version'));
    expect(JSON.stringify(seen.headers)).not.toContain(pro.apiKey);
  });

  it('accepts the key as authToken (Authorization: Bearer) and as x-api-key', async () => {
    const bearer = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, authToken: pro.apiKey, maxRetries: 0 });
    const msg = await bearer.messages.create({ model: SONNET_NAME, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: DEFAULT_REPLY });

    const res = await post('/messages', JSON.stringify({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }), {
      'x-api-key': pro.apiKey,
      'anthropic-version': '2023-06-01',
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: { text: string }[] }).content[0]!.text).toBe(DEFAULT_REPLY);

    for (const r of fakeA.requests) {
      expect(r.headers['x-api-key']).toBe(CHANNEL_KEY_1);
      expect(r.headers.authorization).toBeUndefined();
      expect(JSON.stringify(r.headers)).not.toContain(pro.apiKey);
    }
  });

  it('forwards the body byte for byte (cache_control, unknown fields, formatting) with anthropic-version and anthropic-beta', async () => {
    const body =
      '{"model": "claude-sonnet-4-5",   "max_tokens": 300,\n' +
      ' "x_unknown_field": {"keep": [1, 2.50, 1e3, "\\u00e9t\\u00e9"], "nested": null},\n' +
      ` "system": [{"type": "text", "text": "${SYSTEM}", "cache_control": {"type": "ephemeral"}}],\n` +
      ' "messages": [{"role": "user", "content": [{"type": "text", "text": "Bonjour", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]}]}';
    const beta = 'prompt-caching-2024-07-31, token-efficient-tools-2025-02-19';
    const res = await post('/messages', body, { 'x-api-key': pro.apiKey, 'anthropic-version': '2023-01-01', 'anthropic-beta': beta });
    expect(res.status).toBe(200);
    const reply = (await res.json()) as { usage: Record<string, number> };
    expect(reply.usage.cache_creation_input_tokens).toBe(CACHE_TOKENS);

    expect(fakeA.requests).toHaveLength(1);
    const seen = fakeA.requests[0]!;
    expect(seen.body).toBe(body);
    expect(seen.headers['anthropic-version']).toBe('2023-01-01');
    expect(seen.headers['anthropic-beta']).toBe(beta);
    expect(seen.headers['x-api-key']).toBe(CHANNEL_KEY_1);
    expect(seen.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen.headers)).not.toContain(pro.apiKey);
  });

  it('a body with "model" twice is re-serialised: the upstream gets the model that was priced, once', async () => {
    const messages = [{ role: 'user', content: 'x' }];
    const body = `{"model":"${HAIKU_NAME}","max_tokens":64,"messages":${JSON.stringify(messages)},"model":"${SONNET_NAME}"}`;
    const res = await post('/messages', body, { 'x-api-key': pro.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-model-id')).toBe(SONNET_NAME);
    expect(fakeA.requests).toHaveLength(1);
    expect(fakeA.requests[0]!.body.match(/"model"/g)).toHaveLength(1);
    expect(fakeA.requests[0]!.json).toEqual({ model: SONNET_NAME, max_tokens: 64, messages });
  });

  it('defaults anthropic-version to 2023-06-01 when the client sends none', async () => {
    const res = await post('/messages', JSON.stringify({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }), {
      authorization: `Bearer ${pro.apiKey}`,
    });
    expect(res.status).toBe(200);
    expect(fakeA.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
    expect(fakeA.requests[0]!.headers['anthropic-beta']).toBeUndefined();
  });

  it('streams named events in order (ping included); finalText equals the reply', async () => {
    const rec = recordingFetch();
    const sdk = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: pro.apiKey, maxRetries: 0, fetch: rec.fetch });
    const types: string[] = [];
    const stream = sdk.messages.stream({ model: SONNET_NAME, max_tokens: 256, messages: [{ role: 'user', content: 'Stream please' }] });
    stream.on('streamEvent', (e) => types.push(e.type));
    expect(await stream.finalText()).toBe(DEFAULT_REPLY);
    expect(types[0]).toBe('message_start');
    expect(types).toContain('content_block_delta');
    expect(types.at(-2)).toBe('message_delta');
    expect(types.at(-1)).toBe('message_stop');
    // The SDK swallows ping; on the wire it is there, in Anthropic's order.
    const wire = [...(await rec.calls[0]!.text).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(wire.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(wire.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    const final = await stream.finalMessage();
    expect(final.usage.output_tokens).toBe(countTokens(DEFAULT_REPLY));
    expect(JSON.parse(fakeA.requests[0]!.body).stream).toBe(true);
    expect(fakeA.requests[0]!.headers['x-api-key']).toBe(CHANNEL_KEY_1);
  });

  it('relays the upstream SSE bytes unchanged (raw fetch)', async () => {
    const res = await post(
      '/messages',
      JSON.stringify({ model: SONNET_NAME, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'ECHO: one two three' }] }),
      {
        'x-api-key': pro.apiKey,
        'anthropic-version': '2023-06-01',
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const text = await res.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(deltas).toBe('one two three');
  });

  it('logs usage with cache writes then cache reads, priced at their own rates; X-Service-Cost-USD equals the logged cost', async () => {
    const account = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const body = JSON.stringify({
      model: SONNET_NAME,
      max_tokens: 512,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'What is caching?' }],
    });
    const headers = { 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01' };
    const first = await post('/messages', body, headers);
    expect(first.status).toBe(200);
    const firstCost = first.headers.get('x-service-cost-usd')!;
    const firstId = first.headers.get('request-id')!;
    const firstReply = (await first.json()) as { usage: Record<string, number> };
    const second = await post('/messages', body, headers);
    expect(second.status).toBe(200);
    const secondCost = second.headers.get('x-service-cost-usd')!;
    const secondId = second.headers.get('request-id')!;
    const secondReply = (await second.json()) as { usage: Record<string, number> };

    // The upstream's reply goes to the client unchanged.
    expect(firstReply.usage).toMatchObject({ cache_creation_input_tokens: CACHE_TOKENS, cache_read_input_tokens: 0 });
    expect(secondReply.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: CACHE_TOKENS });

    const prompt = inputTokens('What is caching?', SYSTEM);
    const completion = countTokens(DEFAULT_REPLY);
    const expectedFirst = BigInt(prompt) * SONNET.input + BigInt(completion) * SONNET.output + BigInt(CACHE_TOKENS) * SONNET.cacheWrite;
    const expectedSecond = BigInt(prompt) * SONNET.input + BigInt(completion) * SONNET.output + BigInt(CACHE_TOKENS) * SONNET.cacheRead;

    const row1 = await logRow({ id: firstId, userId: account.userId });
    const row2 = await logRow({ id: secondId, userId: account.userId });
    expect(row1).toMatchObject({
      endpoint: '/v1/anthropic/v1/messages',
      modelRequested: SONNET_NAME,
      modelServed: SONNET_NAME,
      channel: 'anthropic-1',
      status: 200,
      outcome: 'ok',
      stream: false,
      promptTokens: prompt,
      completionTokens: completion,
      cacheWriteTokens: CACHE_TOKENS,
      cacheReadTokens: 0,
      tokensEstimated: false,
    });
    expect(row2).toMatchObject({ promptTokens: prompt, completionTokens: completion, cacheWriteTokens: 0, cacheReadTokens: CACHE_TOKENS });
    expect(pico(row1.costUsd)).toBe(expectedFirst);
    expect(pico(row2.costUsd)).toBe(expectedSecond);
    expect(usdToPico(firstCost)).toBe(expectedFirst);
    expect(usdToPico(secondCost)).toBe(expectedSecond);
  });

  it('bills a stream from message_start and the cumulative message_delta, cache tokens included', async () => {
    const account = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const c = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: account.apiKey, maxRetries: 0 });
    const stream = c.messages.stream({
      model: SONNET_NAME,
      max_tokens: 512,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Stream with cache' }],
    });
    expect(await stream.finalText()).toBe(DEFAULT_REPLY);
    const prompt = inputTokens('Stream with cache', SYSTEM);
    const completion = countTokens(DEFAULT_REPLY);
    const row = await logRow({ userId: account.userId });
    expect(row).toMatchObject({
      stream: true,
      outcome: 'ok',
      status: 200,
      promptTokens: prompt,
      completionTokens: completion,
      cacheWriteTokens: CACHE_TOKENS,
      tokensEstimated: false,
    });
    expect(pico(row.costUsd)).toBe(BigInt(prompt) * SONNET.input + BigInt(completion) * SONNET.output + BigInt(CACHE_TOKENS) * SONNET.cacheWrite);
  });

  it('answers errors in the Anthropic envelope: 401 authentication_error', async () => {
    const bad = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: UNKNOWN_KEY, maxRetries: 0 });
    const err = await bad.messages.create({ model: SONNET_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).requestID).toMatch(/^req_/);

    const res = await post('/messages', '{}', { 'x-api-key': UNKNOWN_KEY });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) } });
    const missing = await post('/messages', '{}', {});
    expect(missing.status).toBe(401);
    expect(upstreamRequests()).toHaveLength(0);
  });

  it('402 billing_error with x-should-retry: false on a zero balance', async () => {
    const broke = await createAccount({ tier: 'pro' });
    const res = await post('/messages', JSON.stringify({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }), {
      'x-api-key': broke.apiKey,
      'anthropic-version': '2023-06-01',
    });
    expect(res.status).toBe(402);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'billing_error' } });

    const sdk = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: broke.apiKey });
    const err = await sdk.messages.create({ model: SONNET_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    expect(upstreamRequests()).toHaveLength(0);
  });

  it('unknown model -> 404 not_found_error, tier-restricted model -> 403 permission_error, bad bodies -> 400 invalid_request_error', async () => {
    const unknown = await client.messages
      .create({ model: 'claude-nonexistent', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknown as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'not_found_error' } });
    // An embedding model is no chat model on any surface.
    const embedding = await client.messages
      .create({ model: 'text-embedding-3-small', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(embedding).toBeInstanceOf(Anthropic.NotFoundError);

    const free = await createAccount({ tier: 'free', balanceUsd: '5' });
    const freeClient = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: free.apiKey, maxRetries: 0 });
    const denied = await freeClient.messages.create({ model: HAIKU_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((denied as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'permission_error' } });
    expect((denied as InstanceType<typeof Anthropic.APIError>).headers?.get('x-should-retry')).toBe('false');

    const headers = { 'x-api-key': pro.apiKey, 'anthropic-version': '2023-06-01' };
    for (const body of [
      '{"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "x"}]}', // no max_tokens
      '{"model": "claude-sonnet-4-5", "max_tokens": 0, "messages": [{"role": "user", "content": "x"}]}',
      '{"model": "claude-sonnet-4-5", "max_tokens": 1.5, "messages": [{"role": "user", "content": "x"}]}',
      '{"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": []}',
      '{"model": "claude-sonnet-4-5", "max_tokens": 16}',
      '{"max_tokens": 16, "messages": [{"role": "user", "content": "x"}]}',
      '{"model": 7, "max_tokens": 16, "messages": [{"role": "user", "content": "x"}]}',
      '[1, 2]',
      '{"model": ',
    ]) {
      const res = await post('/messages', body, headers);
      expect(res.status, body).toBe(400);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    }
    expect(upstreamRequests()).toHaveLength(0);
  });

  it('429 rate_limit_error with Retry-After once the account rpm is spent', async () => {
    const limited = await createAccount({ tier: 'pro', balanceUsd: '5', limits: { rpm: 2 } });
    const body = JSON.stringify({ model: SONNET_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    const headers = { 'x-api-key': limited.apiKey, 'anthropic-version': '2023-06-01' };
    expect((await post('/messages', body, headers)).status).toBe(200);
    expect((await post('/messages', body, headers)).status).toBe(200);
    const res = await post('/messages', body, headers);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('2 requests per minute') } });

    const sdk = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: limited.apiKey, maxRetries: 0 });
    const err = await sdk.messages.create({ model: SONNET_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(upstreamRequests()).toHaveLength(2);
  });

  it('502 api_error when every channel answers 529', async () => {
    fakeA.setDefault({ type: 'status', status: 529 });
    fakeB.setDefault({ type: 'status', status: 529 });
    const err = await client.messages.create({ model: SONNET_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    // Both channels for the model, then both for its declared fallback model.
    expect(fakeA.requests.map((r) => JSON.parse(r.body).model)).toEqual([SONNET_NAME, HAIKU_NAME]);
    expect(fakeB.requests.map((r) => JSON.parse(r.body).model)).toEqual([SONNET_NAME, HAIKU_NAME]);
    fakeA.setDefault({ type: 'ok' });
    fakeB.setDefault({ type: 'ok' });
    await healthy();
  });

  it('passes an upstream 4xx through unchanged, without retry or cost', async () => {
    const upstreamBody = { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content: weird block' } };
    fakeA.queue({ type: 'status', status: 400, body: upstreamBody });
    const res = await post('/messages', JSON.stringify({ model: SONNET_NAME, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }), {
      'x-api-key': pro.apiKey,
      'anthropic-version': '2023-06-01',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(upstreamBody);
    expect(res.headers.get('x-service-cost-usd')).toBe('0');
    expect(fakeA.requests).toHaveLength(1);
    expect(fakeB.requests).toHaveLength(0);
  });

  it('falls back to the next Anthropic channel before the first byte (status 500; stream cut before any event)', async () => {
    fakeA.queue({ type: 'status', status: 500 });
    const { data, response } = await client.messages
      .create({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'fallback' }] })
      .withResponse();
    expect(data.content[0]).toMatchObject({ text: DEFAULT_REPLY });
    expect(response.headers.get('x-service-provider')).toBe('anthropic-2');
    expect(fakeA.requests).toHaveLength(1);
    expect(fakeB.requests).toHaveLength(1);
    expect(fakeB.requests[0]!.body).toBe(fakeA.requests[0]!.body);
    expect(fakeB.requests[0]!.headers['x-api-key']).toBe(CHANNEL_KEY_2);

    fakeA.queue({ type: 'cut', afterChunks: 0 });
    const stream = client.messages.stream({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'fallback stream' }] });
    expect(await stream.finalText()).toBe(DEFAULT_REPLY);
    expect(fakeB.requests).toHaveLength(2);
    await healthy();
  });

  it('falls back to the declared fallback model when every channel of the requested one fails; only then is the body re-serialised', async () => {
    const account = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const body = '{"model":"claude-sonnet-4-5", "max_tokens":64, "x_unknown": [2.50], "messages":[{"role":"user","content":"fall back"}]}';
    fakeA.queue({ type: 'status', status: 503 });
    fakeB.queue({ type: 'status', status: 529 });
    const res = await post('/messages', body, { 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-model-id')).toBe(HAIKU_NAME);
    expect(res.headers.get('x-service-provider')).toBe('anthropic-1');
    expect(fakeA.requests[0]!.body).toBe(body);
    expect(fakeB.requests[0]!.body).toBe(body);
    expect(fakeA.requests[1]!.json).toEqual({ ...JSON.parse(body), model: HAIKU_NAME });
    const row = await logRow({ userId: account.userId });
    expect(row).toMatchObject({ modelRequested: SONNET_NAME, modelServed: HAIKU_NAME, channel: 'anthropic-1', outcome: 'ok' });
    expect(row.attempts).toHaveLength(3);
    // Priced at the model that served: claude-haiku-4-5 is 1 / 5 USD per million.
    const prompt = inputTokens('fall back');
    const completion = countTokens(DEFAULT_REPLY);
    expect(pico(row.costUsd)).toBe(BigInt(prompt) * 1_000_000n + BigInt(completion) * 5_000_000n);
  });

  it('a stream cut mid-way ends with an error event (SDK throws) and is billed for the prompt', async () => {
    const account = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const c = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: account.apiKey, maxRetries: 0 });
    fakeA.queue({ type: 'cut', afterChunks: 4 });
    const stream = c.messages.stream({ model: SONNET_NAME, max_tokens: 64, messages: [{ role: 'user', content: 'cut me' }] });
    await expect(stream.finalText()).rejects.toThrow();
    expect(fakeB.requests).toHaveLength(0); // no fallback after the first byte

    fakeA.queue({ type: 'cut', afterChunks: 4 });
    const res = await post('/messages', JSON.stringify({ model: SONNET_NAME, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'cut me' }] }), {
      'x-api-key': account.apiKey,
      'anthropic-version': '2023-06-01',
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('event: ping');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]+"\}\}\n\n$/);

    const rows = await logRows(account.userId, 2);
    for (const row of rows) {
      expect(row).toMatchObject({ outcome: 'upstream_error', status: 200, stream: true, promptTokens: inputTokens('cut me') });
      expect(pico(row.costUsd)).toBeGreaterThan(0n);
    }
    await healthy();
  });

  it('relays events as they arrive; a client that leaves mid-stream is logged client_closed and billed for what the upstream reported', async () => {
    // The upstream sends message_start, content_block_start, ping, one delta, then goes silent:
    // the client must already have those events while the upstream is still open.
    const account = await createAccount({ tier: 'pro', balanceUsd: '5' });
    fakeA.queue({ type: 'stall', afterChunks: 4 });
    const abort = new AbortController();
    const res = await fetch(`${gw.url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: SONNET_NAME, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'leave early' }] }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('event: ping')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    abort.abort();
    const row = await logRow({ userId: account.userId });
    expect(row).toMatchObject({ outcome: 'client_closed', status: 499, promptTokens: inputTokens('leave early') });
    expect(pico(row.costUsd)).toBeGreaterThan(0n);
  });

  it('count_tokens is forwarded verbatim, answered, logged and not billed', async () => {
    const account = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const c = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: account.apiKey, maxRetries: 0 });
    const counted = await c.messages.countTokens({ model: SONNET_NAME, system: SYSTEM, messages: [{ role: 'user', content: 'How many tokens?' }] });
    expect(counted.input_tokens).toBe(inputTokens('How many tokens?', SYSTEM));
    expect(fakeA.requests).toHaveLength(1);
    expect(fakeA.requests[0]!.path).toBe('/v1/messages/count_tokens');
    expect(fakeA.requests[0]!.headers['x-api-key']).toBe(CHANNEL_KEY_1);

    const body = '{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}],  "x_extra": 1.50}';
    const res = await post('/messages/count_tokens', body, { authorization: `Bearer ${account.apiKey}`, 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-cost-usd')).toBe('0');
    expect(await res.json()).toEqual({ input_tokens: inputTokens('hi') });
    expect(fakeA.requests[1]!.body).toBe(body);

    const rows = await logRows(account.userId, 2);
    for (const row of rows) expect(row).toMatchObject({ endpoint: '/v1/anthropic/v1/messages/count_tokens', status: 200, channel: 'anthropic-1' });
    for (const row of rows) expect(pico(row.costUsd)).toBe(0n);

    const unauth = await post('/messages/count_tokens', body, { 'x-api-key': UNKNOWN_KEY });
    expect(unauth.status).toBe(401);
  });

  it("GET /v1/anthropic/v1/models lists every chat model of the caller's tier, whatever its channel's protocol, in Anthropic's shape", async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id).sort()).toEqual([HAIKU_NAME, SONNET_NAME, 'deepseek-chat', 'gpt-4o', 'gpt-4o-mini'].sort());
    for (const m of page.data) {
      expect(m.type).toBe('model');
      expect(typeof m.display_name).toBe('string');
      expect(Number.isNaN(Date.parse(m.created_at))).toBe(false);
    }
    const free = await createAccount({ tier: 'free', balanceUsd: '1' });
    const freeClient = new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: free.apiKey, maxRetries: 0 });
    expect((await freeClient.models.list()).data.map((m) => m.id).sort()).toEqual([SONNET_NAME, 'deepseek-chat', 'gpt-4o-mini'].sort());
  });
});
