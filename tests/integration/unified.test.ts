// Every client reaches every upstream protocol: the official `openai` and `@anthropic-ai/sdk`
// clients and the Vercel AI SDK (`ai` + `@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/google`) against models whose
// channels speak OpenAI chat, Anthropic Messages and Gemini (one faithful fake upstream serving all
// three), on both server paths, stream and whole reply. Each answer's cost is the same in the
// header (or the usage chunk), the body, the request log and the ledger.
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, UPSTREAM_PATH, startBothModes, testConfig, type GatewayMode, type Protocol, type RunningGateway } from '../support/gateway';
import { CACHE_TOKENS, DEFAULT_REPLY, TOOL_CALL_ARGUMENTS, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { expectBooked } from '../support/booking';
import { pico } from '../support/money';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const MODELS = PROTOCOL_MODELS;
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gateways = {} as Record<GatewayMode, RunningGateway>;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] });
  // A Claude model that falls back to a GPT model: fallback crosses protocols.
  for (const m of config.models as { name: string; fallback_models?: string[] }[]) if (m.name === 'claude-haiku-4-5') m.fallback_models = ['gpt-4o-mini'];
  (config.channels as unknown[]).push({
    name: 'gemini-bad-key',
    protocol: 'gemini',
    base_url: fake.url,
    api_key: 'invalid-key-of-a-revoked-project',
    models: [MODELS.gemini],
    priority: 100,
    timeouts: { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 },
  });
  gateways = await startBothModes(config);
  account = await createAccount({ tier: 'pro', balanceUsd: '50' });
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

/** The last upstream call went to the model's own protocol (it was translated, not refused). */
function expectUpstream(protocol: Protocol): void {
  const last = fake.requests.at(-1)!;
  expect(last.path).toMatch(UPSTREAM_PATH[protocol]);
}

/** A cost as the JSON number a client parsed, and the exact text the gateway booked: the same amount. */
function sameAmount(parsed: unknown, text: string): void {
  expect(typeof parsed).toBe('number');
  expect(parsed).toBe(Number(text));
}

describe.each(['lean', 'next'] as GatewayMode[])('every client reaches every protocol (%s)', (mode) => {
  const gw = () => gateways[mode];

  describe.each(Object.keys(MODELS) as Protocol[])('a model on a %s channel', (protocol) => {
    const model = MODELS[protocol];
    const openai = () => new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: account.apiKey, maxRetries: 0 });
    const anthropic = () => new Anthropic({ baseURL: `${gw().url}/v1/anthropic`, apiKey: account.apiKey, maxRetries: 0 });
    const vercel = () => createOpenAI({ baseURL: `${gw().url}/v1`, apiKey: account.apiKey });
    // The AI SDK's other providers append their own paths: `/messages` to the Anthropic base URL
    // (the alias of /v1/anthropic/v1/messages), `/models/{id}:generateContent` to Google's.
    const vercelAnthropic = () => createAnthropic({ baseURL: `${gw().url}/v1/anthropic`, apiKey: account.apiKey });
    const vercelGoogle = () => createGoogleGenerativeAI({ baseURL: `${gw().url}/v1/gemini/v1beta`, apiKey: account.apiKey });

    it('openai: a whole reply, its cost in the header and the body', async () => {
      const { data, response } = await openai()
        .chat.completions.create({
          model,
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hi' },
          ],
        })
        .withResponse();
      expectUpstream(protocol);
      expect(data.choices[0].message.content).toBe(DEFAULT_REPLY);
      expect(data.choices[0].finish_reason).toBe('stop');
      expect(data.model).toBe(model);
      expect(data.usage!.prompt_tokens).toBeGreaterThan(0);
      const cost = response.headers.get('x-service-cost-usd')!;
      sameAmount((data as unknown as { service: { cost_usd: unknown } }).service.cost_usd, cost);
      await expectBooked(response.headers.get('x-request-id'), cost);
    });

    it('openai: a stream with the usage chunk', async () => {
      const { data: stream, response } = await openai()
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      let text = '';
      let finish: string | null = null;
      let usage: (OpenAI.CompletionUsage & { cost_usd?: unknown }) | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expectUpstream(protocol);
      expect(text).toBe(DEFAULT_REPLY);
      expect(finish).toBe('stop');
      const requestId = response.headers.get('x-request-id');
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
      sameAmount(usage!.cost_usd, row.costUsd.toFixed(12));
      await expectBooked(requestId, row.costUsd.toFixed(12));
    });

    it('openai: a tool call comes back as tool_calls with its arguments, streamed and whole', async () => {
      const tools = [{ type: 'function' as const, function: WEATHER_TOOL }];
      const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
      const whole = await openai().chat.completions.create({ model, messages, tools });
      expect(whole.choices[0].finish_reason).toBe('tool_calls');
      const call = whole.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));
      expect(call.id).toBeTruthy();

      const runner = openai().chat.completions.stream({ model, messages, tools });
      const final = await runner.finalChatCompletion();
      const streamed = final.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      expect(streamed.function.name).toBe('get_weather');
      expect(JSON.parse(streamed.function.arguments)).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));

      // The tool's result goes back and the model answers with text.
      const after = await openai().chat.completions.create({
        model,
        tools,
        messages: [...messages, whole.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c": 21}' }],
      });
      expectUpstream(protocol);
      expect(after.choices[0].finish_reason).toBe('stop');
      expect(after.choices[0].message.content).toBeTruthy();
    });

    it('anthropic: a whole reply, its cost in the header', async () => {
      const { data, response } = await anthropic()
        .messages.create({ model, max_tokens: 256, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] })
        .withResponse();
      expectUpstream(protocol);
      expect(data.type).toBe('message');
      expect(data.content[0]).toMatchObject({ type: 'text', text: DEFAULT_REPLY });
      expect(data.stop_reason).toBe('end_turn');
      expect(data.usage.input_tokens).toBeGreaterThan(0);
      expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
      await expectBooked(response.headers.get('x-request-id'), response.headers.get('x-service-cost-usd')!);
    });

    it('anthropic: a stream the SDK assembles into the final message', async () => {
      const stream = anthropic().messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] });
      const message = await stream.finalMessage();
      expectUpstream(protocol);
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: DEFAULT_REPLY })]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.output_tokens).toBeGreaterThan(0);
      const requestId = stream.request_id;
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
      await expectBooked(requestId, row.costUsd.toFixed(12));
    });

    it('anthropic: a tool call comes back as a tool_use block, streamed and whole; its result goes back', async () => {
      const tools = [{ name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters as Anthropic.Tool.InputSchema }];
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const whole = await anthropic().messages.create({ model, max_tokens: 256, tools, messages });
      expect(whole.stop_reason).toBe('tool_use');
      const use = whole.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(use.name).toBe('get_weather');
      expect(use.input).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));

      const streamed = await anthropic().messages.stream({ model, max_tokens: 256, tools, messages }).finalMessage();
      expect(streamed.stop_reason).toBe('tool_use');
      const streamedUse = streamed.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(streamedUse.input).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));

      const after = await anthropic().messages.create({
        model,
        max_tokens: 256,
        tools,
        messages: [
          ...messages,
          { role: 'assistant', content: whole.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"temp_c": 21}' }] },
        ],
      });
      expectUpstream(protocol);
      expect(after.stop_reason).toBe('end_turn');
      expect(after.content.some((b) => b.type === 'text' && b.text.length > 0)).toBe(true);
    });

    it('Vercel AI SDK: generateText and streamText', async () => {
      const generated = await generateText({ model: vercel().chat(model), prompt: 'Hi', maxRetries: 0 });
      expectUpstream(protocol);
      expect(generated.text).toBe(DEFAULT_REPLY);
      expect(generated.finishReason).toBe('stop');
      const headers = generated.response.headers ?? {};
      await expectBooked(headers['x-request-id'], headers['x-service-cost-usd']);

      const streamed = streamText({ model: vercel().chat(model), prompt: 'Hi', maxRetries: 0 });
      let text = '';
      for await (const piece of streamed.textStream) text += piece;
      expect(text).toBe(DEFAULT_REPLY);
      expect(await streamed.finishReason).toBe('stop');
      const requestId = (await streamed.response).headers?.['x-request-id'];
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
      await expectBooked(requestId, row.costUsd.toFixed(12));
    });

    it.each([
      ['@ai-sdk/anthropic', () => vercelAnthropic()(model)],
      ['@ai-sdk/google', () => vercelGoogle()(model)],
    ] as const)('Vercel AI SDK, %s: generateText and streamText, booked', async (_name, make) => {
      const generated = await generateText({ model: make(), prompt: 'Hi', maxRetries: 0 });
      expectUpstream(protocol);
      expect(generated.text).toBe(DEFAULT_REPLY);
      const headers = generated.response.headers ?? {};
      await expectBooked(headers['x-request-id'], headers['x-service-cost-usd']);

      const streamed = streamText({ model: make(), prompt: 'Hi', maxRetries: 0 });
      let text = '';
      for await (const piece of streamed.textStream) text += piece;
      expect(text).toBe(DEFAULT_REPLY);
      const requestId = (await streamed.response).headers?.['x-request-id'];
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
      await expectBooked(requestId, row.costUsd.toFixed(12));
    });
  });
});

describe.each(['lean', 'next'] as GatewayMode[])('translation edges (%s)', (mode) => {
  const gw = () => gateways[mode];
  const openai = () => new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: account.apiKey, maxRetries: 0 });
  const anthropic = () => new Anthropic({ baseURL: `${gw().url}/v1/anthropic`, apiKey: account.apiKey, maxRetries: 0 });

  it('both model lists show models of every protocol; count_tokens off Anthropic is counted here', async () => {
    const ids: string[] = [];
    for await (const m of openai().models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining([MODELS.openai, MODELS.anthropic, MODELS.gemini, 'text-embedding-3-small']));
    const anthropicIds = (await anthropic().models.list()).data.map((m) => m.id);
    expect(anthropicIds).toEqual(expect.arrayContaining([MODELS.openai, MODELS.anthropic, MODELS.gemini]));
    expect(anthropicIds).not.toContain('text-embedding-3-small');

    const before = fake.requests.length;
    const counted = await anthropic().messages.countTokens({
      model: MODELS.openai,
      messages: [{ role: 'user', content: 'How many tokens is this sentence?' }],
    });
    expect(counted.input_tokens).toBeGreaterThan(5);
    expect(fake.requests.length).toBe(before);
    const forwarded = await anthropic().messages.countTokens({
      model: MODELS.anthropic,
      messages: [{ role: 'user', content: 'How many tokens is this sentence?' }],
    });
    expect(forwarded.input_tokens).toBeGreaterThan(5);
    expect(fake.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');
  });

  it('a parameter the upstream cannot carry is a 400 naming it and the model, before any upstream call', async () => {
    const before = fake.requests.length;
    const err = await openai()
      .chat.completions.create({ model: MODELS.anthropic, n: 3, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.param).toBe('n');
    expect(e.message).toContain(MODELS.anthropic);
    expect(fake.requests.length).toBe(before);
  });

  it("an upstream's 4xx reaches the client in the client's envelope with its status", async () => {
    fake.queue({ type: 'status', status: 400 });
    const fromAnthropic = await openai()
      .chat.completions.create({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(fromAnthropic).toBeInstanceOf(OpenAI.BadRequestError);
    expect((fromAnthropic as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'invalid_request_error' });

    fake.queue({ type: 'status', status: 400 });
    const fromOpenai = await anthropic()
      .messages.create({ model: MODELS.openai, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(fromOpenai).toBeInstanceOf(Anthropic.BadRequestError);
    expect((fromOpenai as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it("a Claude model falls back to a GPT model for an OpenAI client; the cost is at the served model's prices", async () => {
    fake.queue({ type: 'status', status: 529 });
    const { data, response } = await openai()
      .chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe(DEFAULT_REPLY);
    expect(response.headers.get('x-service-model-id')).toBe('gpt-4o-mini');
    expectUpstream('openai');
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id: response.headers.get('x-request-id')! } }), 10_000);
    expect(row.modelServed).toBe('gpt-4o-mini');
    // gpt-4o-mini: 0.15 and 0.6 USD per million tokens.
    expect(pico(row.costUsd.toFixed(12))).toBe(BigInt(row.promptTokens) * 150_000n + BigInt(row.completionTokens) * 600_000n);
  });

  it("a Gemini channel whose key Google refuses (400 API_KEY_INVALID) is the channel's failure: the next channel answers", async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: MODELS.gemini, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe(DEFAULT_REPLY);
    expect(response.headers.get('x-service-provider')).toBe('gemini-1');
  });

  it('cache reads and writes of an Anthropic upstream are billed at their own prices and shown to an OpenAI client', async () => {
    const system = `You are terse. ${mode} ${Date.now()}`;
    const ask = () =>
      openai()
        .chat.completions.create({
          model: MODELS.anthropic,
          messages: [
            { role: 'system', content: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } } as OpenAI.ChatCompletionContentPartText] },
            { role: 'user', content: 'Hi' },
          ],
        })
        .withResponse();
    const first = await ask();
    const second = await ask();
    expect(second.data.usage!.prompt_tokens_details?.cached_tokens).toBe(CACHE_TOKENS);
    for (const [{ response }, cached] of [
      [first, 'write'],
      [second, 'read'],
    ] as const) {
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: response.headers.get('x-request-id')! } }), 10_000);
      expect(cached === 'write' ? row.cacheWriteTokens : row.cacheReadTokens).toBe(CACHE_TOKENS);
      // claude-sonnet-4-5: 3 in, 15 out, 0.3 cache read, 3.75 cache write (USD per million tokens).
      const expected =
        BigInt(row.promptTokens) * 3_000_000n +
        BigInt(row.completionTokens) * 15_000_000n +
        BigInt(row.cacheReadTokens) * 300_000n +
        BigInt(row.cacheWriteTokens) * 3_750_000n;
      expect(pico(row.costUsd.toFixed(12))).toBe(expected);
      expect(response.headers.get('x-service-cost-usd')).toBe(row.costUsd.toFixed(12).replace(/\.?0+$/, ''));
    }
  });

  it("a stream the upstream cuts after the first byte ends with an error event in the client's envelope, and is billed", async () => {
    fake.queue({ type: 'cut', afterChunks: 3 });
    const res = await fetch(`${gw().url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.openai, max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'Tell me a long story' }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('event: message_start');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"\w+"/);
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id: res.headers.get('x-request-id')! } }), 10_000);
    expect(row.outcome).toBe('upstream_error');
    expect(pico(row.costUsd.toFixed(12))).toBeGreaterThan(0n);
  });
});
