// The Gemini surface (/v1/gemini) driven by the official @google/genai SDK, as a user configures
// it (httpOptions.baseUrl), against models whose channels speak Gemini (identity), OpenAI chat and
// Anthropic Messages: text, streams, function calls with AUTO / ANY / NONE, countTokens and the
// model list, Google's error envelope, cost headers and booking.
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type, type Content } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, UPSTREAM_PATH, startBothModes, testConfig, type GatewayMode, type Protocol, type RunningGateway } from '../support/gateway';
import { DEFAULT_REPLY, TOOL_CALL_ARGUMENTS, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { expectBooked } from '../support/booking';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const MODELS = PROTOCOL_MODELS;
const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const TIME = { name: 'get_time', description: 'The time in a city', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } };

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gateways = {} as Record<GatewayMode, RunningGateway>;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  gateways = await startBothModes(testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] }));
  account = await createAccount({ tier: 'pro', balanceUsd: '50' });
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

const clientOf = (apiKey: string, mode: GatewayMode) =>
  new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${gateways[mode].url}/v1/gemini`, retryOptions: { attempts: 1 } } });
const client = (apiKey = account.apiKey) => clientOf(apiKey, 'lean');
const gw = () => gateways.lean;

function expectUpstream(protocol: Protocol): void {
  expect(fake.requests.at(-1)!.path).toMatch(UPSTREAM_PATH[protocol]);
}

describe.each((['lean', 'next'] as GatewayMode[]).flatMap((mode) => (Object.keys(MODELS) as Protocol[]).map((p) => [mode, p] as const)))(
  '@google/genai (%s) on a %s channel',
  (mode, protocol) => {
    const model = MODELS[protocol];
    const client = (apiKey = account.apiKey) => clientOf(apiKey, mode);

    it('generateContent: text, usageMetadata, the cost in headers and booked', async () => {
      const res = await client().models.generateContent({
        model,
        contents: 'Hi',
        config: { systemInstruction: 'Be brief.', temperature: 0.5, maxOutputTokens: 200, safetySettings: [] },
      });
      expectUpstream(protocol);
      expect(res.text).toBe(DEFAULT_REPLY);
      expect(res.candidates![0].finishReason).toBe('STOP');
      expect(res.usageMetadata!.promptTokenCount).toBeGreaterThan(0);
      expect(res.usageMetadata!.totalTokenCount).toBe(res.usageMetadata!.promptTokenCount! + res.usageMetadata!.candidatesTokenCount!);
      const headers = res.sdkHttpResponse!.headers!;
      expect(headers['x-service-model-id']).toBe(model);
      const row = await expectBooked(headers['x-request-id'], headers['x-service-cost-usd']);
      // Logged (and counted in metrics) with the model as a parameter of the path.
      expect(row.endpoint).toMatch(/^\/v1\/gemini\/v1(beta)?\/models\/\{model\}:generateContent$/);
    });

    it('generateContentStream: SSE chunks, finishReason and usageMetadata in the last', async () => {
      const stream = await client().models.generateContentStream({ model, contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
      let text = '';
      let last;
      for await (const chunk of stream) {
        text += chunk.text ?? '';
        last = chunk;
      }
      expectUpstream(protocol);
      expect(text).toBe(DEFAULT_REPLY);
      expect(last!.candidates![0].finishReason).toBe('STOP');
      expect(last!.usageMetadata!.candidatesTokenCount).toBeGreaterThan(0);
      const row = await waitFor(
        () => db.requestLog.findFirst({ where: { endpoint: { endsWith: '/models/{model}:streamGenerateContent' }, modelServed: model } }),
        10_000,
      );
      expect(row.stream).toBe(true);
      expect(row.costUsd.toNumber()).toBeGreaterThan(0);
    });

    it('function calls: ANY with allowedFunctionNames, the result back, whole and streamed', async () => {
      const config = {
        tools: [{ functionDeclarations: [WEATHER, TIME] }],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_time'] } },
      };
      const ask: Content = { role: 'user', parts: [{ text: 'What time is it in Paris?' }] };
      const res = await client().models.generateContent({ model, contents: [ask], config });
      expect(res.functionCalls).toHaveLength(1);
      const call = res.functionCalls![0];
      expect(call.name).toBe('get_time');
      expect(call.args).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));
      const sent = JSON.parse(fake.requests.at(-1)!.body) as Record<string, unknown>;
      if (protocol === 'openai') expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'get_time' } });
      if (protocol === 'anthropic') expect(sent.tool_choice).toEqual({ type: 'tool', name: 'get_time' });

      // The model's turn goes back as the SDK keeps it, with the function's result.
      const after = await client().models.generateContent({
        model,
        contents: [
          ask,
          res.candidates![0].content!,
          { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: '12:00' } } }] },
        ],
        config: { tools: config.tools },
      });
      expect(after.text).toContain('12:00');
      expect(after.functionCalls).toBeUndefined();

      const stream = await client().models.generateContentStream({ model, contents: [ask], config });
      const calls = [];
      for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
      expect(calls.map((c) => [c.name, c.args])).toEqual([['get_time', JSON.parse(TOOL_CALL_ARGUMENTS)]]);
    });

    it('function calls: AUTO calls the first function; NONE answers in text', async () => {
      const tools = [{ functionDeclarations: [WEATHER] }];
      const auto = await client().models.generateContent({ model, contents: 'Weather in Paris?', config: { tools } });
      expect(auto.functionCalls![0].name).toBe('get_weather');
      const none = await client().models.generateContent({
        model,
        contents: 'Weather in Paris?',
        config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } } },
      });
      expect(none.functionCalls).toBeUndefined();
      expect(none.text).toBe(DEFAULT_REPLY);
    });

    it('countTokens: forwarded on Gemini, counted here elsewhere; free and logged', async () => {
      const res = await client().models.countTokens({ model, contents: 'How many tokens is this?' });
      expect(res.totalTokens).toBeGreaterThan(0);
      if (protocol === 'gemini') expect(fake.requests.at(-1)!.path).toBe(`/v1beta/models/${model}:countTokens`);
    });

    it('the model is in the list and can be read alone', async () => {
      const got = await client().models.get({ model });
      expect(got.name).toBe(`models/${model}`);
      expect(got.supportedActions).toEqual(expect.arrayContaining(['generateContent', 'countTokens']));
    });

    it('what the upstream cannot take is dropped and named; the identity keeps the body', async () => {
      const res = await client().models.generateContent({
        model,
        contents: 'Hi',
        // Google's grounding is billed by Google per prompt: a Gemini channel never gets it (a 400, in
        // "the Gemini surface" below); the other protocols drop it.
        config: {
          safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] as never,
          ...(protocol === 'gemini' ? {} : { tools: [{ googleSearch: {} }] }),
        },
      });
      expect(res.text).toBe(DEFAULT_REPLY);
      const dropped = res.sdkHttpResponse!.headers!['x-service-dropped'];
      if (protocol === 'gemini') {
        expect(dropped).toBeUndefined();
        expect(JSON.parse(fake.requests.at(-1)!.body)).toMatchObject({ safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' }] });
      } else expect(dropped).toBe('safetySettings,tools.googleSearch');
    });
  },
);

describe('the Gemini surface', () => {
  it('lists the models in pages, in Google\u2019s shape', async () => {
    const pager = await client().models.list({ config: { pageSize: 1 } });
    const names: string[] = [];
    for await (const m of pager) {
      names.push(m.name!);
      expect(m.supportedActions).toContain('generateContent');
    }
    expect(names).toEqual(expect.arrayContaining(Object.values(MODELS).map((m) => `models/${m}`)));
    expect(new Set(names).size).toBe(names.length);
  });

  it('answers Google\u2019s error envelope: a bad key, an unknown model, a bad body', async () => {
    const cases: [() => Promise<unknown>, number, string][] = [
      [() => client('sk-not-a-key-of-ours').models.generateContent({ model: MODELS.gemini, contents: 'Hi' }), 401, 'UNAUTHENTICATED'],
      [() => client().models.generateContent({ model: 'no-such-model', contents: 'Hi' }), 404, 'NOT_FOUND'],
      [() => client().models.generateContent({ model: MODELS.openai, contents: 'Hi', config: { candidateCount: 2 } }), 400, 'INVALID_ARGUMENT'],
      [() => client().models.generateContent({ model: MODELS.gemini, contents: 'Hi', config: { candidateCount: 9 } }), 400, 'INVALID_ARGUMENT'],
      // Google bills grounding per prompt and the gateway cannot: never sent to a Gemini channel.
      [() => client().models.generateContent({ model: MODELS.gemini, contents: 'Hi', config: { tools: [{ googleSearch: {} }] } }), 400, 'INVALID_ARGUMENT'],
    ];
    for (const [call, status, name] of cases) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(status);
      expect(JSON.parse((err as ApiError).message)).toMatchObject({ error: { code: status, status: name } });
    }
  });

  it('a limit answers 429 RESOURCE_EXHAUSTED with Retry-After; an empty balance 402 FAILED_PRECONDITION, not a quota to retry', async () => {
    const limited = await createAccount({ tier: 'pro', balanceUsd: '5', limits: { rpm: 1 } });
    const call = (key: string) =>
      fetch(`${gw().url}/v1/gemini/v1beta/models/${MODELS.openai}:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
        body: JSON.stringify({ contents: [{ parts: [{ text: 'Hi' }] }] }),
      });
    expect((await call(limited.apiKey)).status).toBe(200);
    const refused = await call(limited.apiKey);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });

    const broke = await createAccount({ tier: 'pro', balanceUsd: '0' });
    const res = await call(broke.apiKey);
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ error: { code: 402, status: 'FAILED_PRECONDITION' } });
  });

  it('takes the key as ?key= and as a Bearer token; streams a JSON array without alt=sse', async () => {
    for (const protocol of Object.keys(MODELS) as Protocol[]) {
      const res = await fetch(`${gw().url}/v1/gemini/v1beta/models/${MODELS[protocol]}:streamGenerateContent?key=${account.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
      });
      expect(res.status).toBe(200);
      const chunks = JSON.parse(await res.text()) as { candidates?: { content?: { parts?: { text?: string }[] }; finishReason?: string }[] }[];
      expect(chunks.map((c) => c.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '').join('')).toBe(DEFAULT_REPLY);
      expect(chunks.at(-1)!.candidates![0].finishReason).toBe('STOP');
    }
    const res = await fetch(`${gw().url}/v1/gemini/v1/models/${MODELS.anthropic}:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'Hi' }] }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { candidates: { content: { parts: { text: string }[] } }[] }).candidates[0].content.parts[0].text).toBe(DEFAULT_REPLY);
  });
});
