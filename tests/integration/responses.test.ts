// The OpenAI Responses API at /v1/responses over every channel protocol: the official `openai`
// client (responses.create / stream / retrieve / delete, previous_response_id, a function-call
// round trip) and the Vercel AI SDK's default provider (`createOpenAI(...)(model)`, which speaks
// Responses), against models whose channels speak OpenAI chat, Anthropic Messages and Gemini, on
// both server paths. Each answer's cost is the same in the header, the body, the log and the ledger.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, UPSTREAM_PATH, startBothModes, testConfig, type GatewayMode, type Protocol, type RunningGateway } from '../support/gateway';
import { DEFAULT_REPLY, GEMINI_THOUGHT, TOOL_CALL_ARGUMENTS, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { expectBooked as expectBookedAs } from '../support/booking';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const MODELS = PROTOCOL_MODELS;
const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gateways = {} as Record<GatewayMode, RunningGateway>;
let account: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] });
  gateways = await startBothModes(config);
  // Enterprise: some 260 requests a minute go out on this account, beyond a pro account's rate.
  [account, other] = await Promise.all([createAccount({ tier: 'enterprise', balanceUsd: '50' }), createAccount({ tier: 'pro', balanceUsd: '50' })]);
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

/** The log row (endpoint /v1/responses) and the usage ledger entry of a request carry exactly `costText`. */
const expectBooked = (requestId: string | null | undefined, costText: string) => expectBookedAs(requestId, costText, { endpoint: '/v1/responses' });

function expectUpstream(protocol: Protocol): void {
  expect(fake.requests.at(-1)!.path).toMatch(UPSTREAM_PATH[protocol]);
}

type WithService = { service: { cost_usd: unknown } };

describe.each(['lean', 'next'] as GatewayMode[])('/v1/responses (%s)', (mode) => {
  const gw = () => gateways[mode];
  const openai = (key = account.apiKey) => new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: key, maxRetries: 0 });
  const vercel = () => createOpenAI({ baseURL: `${gw().url}/v1`, apiKey: account.apiKey });

  describe.each(Object.keys(MODELS) as Protocol[])('a model on a %s channel', (protocol) => {
    const model = MODELS[protocol];

    it('responses.create: a whole reply, stored and retrievable, its cost in the header, the body, the log and the ledger', async () => {
      const { data, response } = await openai()
        .responses.create({ model, instructions: 'Be brief.', input: 'Hi', metadata: { case: 'create' } })
        .withResponse();
      expectUpstream(protocol);
      expect(data.object).toBe('response');
      expect(data.id).toMatch(/^resp_/);
      expect(data.status).toBe('completed');
      expect(data.output_text).toBe(DEFAULT_REPLY);
      expect(data.model).toBe(model);
      expect(data.instructions).toBe('Be brief.');
      expect(data.metadata).toEqual({ case: 'create' });
      expect(data.usage!.input_tokens).toBeGreaterThan(0);
      expect(data.usage!.output_tokens).toBeGreaterThan(0);
      const cost = response.headers.get('x-service-cost-usd')!;
      expect((data as unknown as WithService).service.cost_usd).toBe(Number(cost));
      await expectBooked(response.headers.get('x-request-id'), cost);

      // Stored before the reply went out: retrievable at once, here and on the other server path.
      const again = await openai().responses.retrieve(data.id);
      expect(again.output_text).toBe(DEFAULT_REPLY);
      expect(again.id).toBe(data.id);
      const elsewhere = new OpenAI({ baseURL: `${gateways[mode === 'lean' ? 'next' : 'lean'].url}/v1`, apiKey: account.apiKey, maxRetries: 0 });
      expect((await elsewhere.responses.retrieve(data.id)).id).toBe(data.id);
    });

    it('responses.stream: the SDK assembles the final response; the stored one is the same', async () => {
      const stream = openai().responses.stream({ model, input: 'Hi' });
      let deltas = '';
      stream.on('response.output_text.delta', (e) => {
        deltas += e.delta;
      });
      const final = await stream.finalResponse();
      expectUpstream(protocol);
      expect(deltas).toBe(DEFAULT_REPLY);
      expect(final.output_text).toBe(DEFAULT_REPLY);
      expect(final.status).toBe('completed');
      expect(final.usage!.output_tokens).toBeGreaterThan(0);
      const stored = await openai().responses.retrieve(final.id);
      expect(final.output).toMatchObject(stored.output);

      // The raw events: the cost of response.completed is the one logged and booked.
      const { data: events, response } = await openai().responses.create({ model, input: 'Hi', stream: true }).withResponse();
      const types: string[] = [];
      let completed: OpenAI.Responses.Response | undefined;
      for await (const ev of events) {
        expect(ev.sequence_number).toBe(types.length);
        types.push(ev.type);
        if (ev.type === 'response.completed') completed = ev.response;
      }
      expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
      expect(types.at(-1)).toBe('response.completed');
      const requestId = response.headers.get('x-request-id');
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
      expect(row.stream).toBe(true);
      expect((completed as unknown as WithService).service.cost_usd).toBe(Number(row.costUsd.toFixed(12)));
      await expectBooked(requestId, row.costUsd.toFixed(12));
    });

    it('previous_response_id: a second turn continues the stored conversation', async () => {
      const first = await openai().responses.create({ model, input: 'My name is Ada.' });
      const second = await openai().responses.create({ model, input: 'What is my name?', previous_response_id: first.id });
      expectUpstream(protocol);
      expect(second.previous_response_id).toBe(first.id);
      const sent = fake.requests.at(-1)!.body;
      expect(sent).toContain('My name is Ada.');
      expect(sent).toContain(DEFAULT_REPLY);
      expect(sent).toContain('What is my name?');
      // An earlier assistant message given by reference (as the Vercel AI SDK sends it) is resolved from the store.
      const message = first.output.find((o) => o.type === 'message')!;
      await openai().responses.create({
        model,
        store: false,
        input: [
          { role: 'user', content: 'My name is Ada.' },
          { type: 'item_reference', id: message.id! },
          { role: 'user', content: 'Again?' },
        ],
      });
      expect(fake.requests.at(-1)!.body).toContain(DEFAULT_REPLY);
      // And a third turn, streamed, on top of the second.
      const third = await openai().responses.stream({ model, input: 'Thanks.', previous_response_id: second.id }).finalResponse();
      expect(third.output_text).toBe(DEFAULT_REPLY);
      expect(fake.requests.at(-1)!.body).toContain('My name is Ada.');
    });

    it('a function-call round trip: function_call out, function_call_output back, streamed and whole', async () => {
      const first = await openai().responses.create({ model, input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
      const call = first.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')!;
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.arguments)).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));
      expect(call.call_id).toBeTruthy();

      const streamed = await openai()
        .responses.stream({ model, input: 'Weather in Paris?', tools: [WEATHER_TOOL] })
        .finalResponse();
      const streamedCall = streamed.output.find((o) => o.type === 'function_call')!;
      if (streamedCall.type !== 'function_call') throw new Error('no function call');
      expect(JSON.parse(streamedCall.arguments)).toEqual(JSON.parse(TOOL_CALL_ARGUMENTS));

      // The result goes back by previous_response_id, and statelessly with the call replayed.
      const after = await openai().responses.create({
        model,
        tools: [WEATHER_TOOL],
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 21}' }],
      });
      expectUpstream(protocol);
      expect(after.output_text).toBeTruthy();
      const stateless = await openai().responses.create({
        model,
        tools: [WEATHER_TOOL],
        store: false,
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 21}' },
        ],
      });
      expect(stateless.output_text).toBeTruthy();
      // store: false keeps nothing.
      await expect(openai().responses.retrieve(stateless.id)).rejects.toMatchObject({ status: 404 });
    });

    it('Vercel AI SDK default provider: generateText, streamText and a tool call with its result', async () => {
      const generated = await generateText({ model: vercel()(model), prompt: 'Hi', maxRetries: 0 });
      expectUpstream(protocol);
      expect(generated.text).toBe(DEFAULT_REPLY);
      expect(generated.finishReason).toBe('stop');
      const headers = generated.response.headers ?? {};
      await expectBooked(headers['x-request-id'], headers['x-service-cost-usd']);

      const streamed = streamText({ model: vercel()(model), prompt: 'Hi', maxRetries: 0 });
      let text = '';
      for await (const piece of streamed.textStream) text += piece;
      expect(text).toBe(DEFAULT_REPLY);
      expect(await streamed.finishReason).toBe('stop');
      const requestId = (await streamed.response).headers?.['x-request-id'];
      const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
      await expectBooked(requestId, row.costUsd.toFixed(12));

      const executed: unknown[] = [];
      const withTool = await generateText({
        model: vercel()(model),
        prompt: 'Weather in Paris?',
        maxRetries: 0,
        stopWhen: stepCountIs(2),
        tools: {
          get_weather: tool({
            description: WEATHER_TOOL.description,
            inputSchema: jsonSchema<{ city: string }>(WEATHER_TOOL.parameters as Parameters<typeof jsonSchema>[0]),
            execute: async (input) => {
              executed.push(input);
              return { temp_c: 21 };
            },
          }),
        },
      });
      expect(executed).toEqual([JSON.parse(TOOL_CALL_ARGUMENTS)]);
      expect(withTool.steps).toHaveLength(2);
      expect(withTool.steps[0].finishReason).toBe('tool-calls');
      expect(withTool.text).toBeTruthy();

      // Streamed, the tool call arrives whole.
      const streamedTool = streamText({
        model: vercel()(model),
        prompt: 'Weather in Paris?',
        maxRetries: 0,
        tools: {
          get_weather: tool({
            description: WEATHER_TOOL.description,
            inputSchema: jsonSchema<{ city: string }>(WEATHER_TOOL.parameters as Parameters<typeof jsonSchema>[0]),
          }),
        },
      });
      const toolCalls = await streamedTool.toolCalls;
      expect(toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', JSON.parse(TOOL_CALL_ARGUMENTS)]]);
      expect(await streamedTool.finishReason).toBe('tool-calls');

      // A next turn built from the SDK's own messages: it sends the earlier reply by item_reference.
      const turnTwo = await generateText({
        model: vercel()(model),
        messages: [{ role: 'user', content: 'Hi' }, ...generated.response.messages, { role: 'user', content: 'And again?' }],
        maxRetries: 0,
      });
      expect(turnTwo.text).toBe(DEFAULT_REPLY);
      const sent = fake.requests.at(-1)!.body;
      expect(sent).toContain('And again?');
      expect(sent.split(DEFAULT_REPLY).length).toBe(2);
    });
  });

  it('reasoning.effort on a Gemini model: the thinking comes back as a reasoning item, whole and streamed', async () => {
    const whole = await openai().responses.create({ model: MODELS.gemini, input: 'Think first.', reasoning: { effort: 'low' } });
    expect(whole.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    const reasoning = whole.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary[0].text).toBe(GEMINI_THOUGHT);
    expect(whole.output_text).toBe(DEFAULT_REPLY);
    expect(whole.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const streamed = await openai()
      .responses.stream({ model: MODELS.gemini, input: 'Think first.', reasoning: { effort: 'low' } })
      .finalResponse();
    expect(streamed.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(streamed.output_text).toBe(DEFAULT_REPLY);
  });

  it('a stream the upstream cuts after its first text ends with an error event in sequence; nothing is stored', async () => {
    fake.queue({ type: 'cut', afterChunks: 3 });
    const res = await fetch(`${gw().url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.openai, input: 'Hi', stream: true }),
    });
    expect(res.status).toBe(200);
    const blocks = (await res.text()).split('\n\n').filter((b) => b !== '');
    const events = blocks.map(
      (b) => JSON.parse(b.split('\n')[1].slice(6)) as { type: string; sequence_number: number; error?: { type: string; message: string } },
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const last = events.at(-1)!;
    expect(blocks.at(-1)!.startsWith('event: error\n')).toBe(true);
    expect(last.type).toBe('error');
    expect(last.error!.type).toBe('upstream_error');
    expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(true);
    expect(events.some((e) => e.type === 'response.completed')).toBe(false);
    const created = events[0] as unknown as { response: { id: string } };
    expect(await db.storedResponse.findUnique({ where: { id: created.response.id } })).toBeNull();
  });

  it('an expired response is a 404 and is deleted when met', async () => {
    const created = await openai().responses.create({ model: MODELS.openai, input: 'Hi' });
    await db.storedResponse.update({ where: { id: created.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expect(openai().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai().responses.create({ model: MODELS.openai, input: 'Hi', previous_response_id: created.id })).rejects.toMatchObject({ status: 404 });
    await waitFor(async () => (await db.storedResponse.findUnique({ where: { id: created.id } })) === null, 10_000);
  });

  it('GET and DELETE: another account gets 404; a deleted response is gone', async () => {
    const created = await openai().responses.create({ model: MODELS.openai, input: 'Hi' });
    await expect(openai(other.apiKey).responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai(other.apiKey).responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai(other.apiKey).responses.create({ model: MODELS.openai, input: 'Hi', previous_response_id: created.id })).rejects.toMatchObject({
      status: 404,
      error: { type: 'invalid_request_error', param: 'previous_response_id' },
    });
    const res = await fetch(`${gw().url}/v1/responses/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: created.id, object: 'response', deleted: true });
    await expect(openai().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(openai().responses.retrieve('resp_doesnotexist')).rejects.toMatchObject({ status: 404 });
  });

  it('answers malformed requests with a 400 naming the field (or a 404 for an unknown item), never a 500', async () => {
    const cases: [Record<string, unknown>, string, number?][] = [
      [{ input: 5 }, 'input'],
      [{}, 'input'],
      [{ input: [] }, 'input'],
      [{ input: [1] }, 'input[0]'],
      [{ input: [{ type: 'function_call' }] }, 'input[0].call_id'],
      [{ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'input[0].arguments'],
      [{ input: [{ type: 'function_call_output', call_id: 'c', output: 5 }] }, 'input[0].output'],
      [{ input: [{ role: 'user', content: 5 }] }, 'input[0].content'],
      [{ input: [{ role: 'user', content: [null] }] }, 'input[0].content[0]'],
      [{ input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
      [{ input: [{ type: 'web_search_call', id: 'ws_1' }] }, 'input[0].type'],
      [{ input: [{ type: 'item_reference', id: 'msg_nope' }] }, 'input[0].id', 404],
      [{ input: 'Hi', tools: 'x' }, 'tools'],
      [{ input: 'Hi', tools: [null] }, 'tools[0]'],
      [{ input: 'Hi', tools: [{ type: 'function' }] }, 'tools[0].name'],
      [{ input: 'Hi', tools: [{ type: 'teleport' }] }, 'tools[0].type'],
      [{ input: 'Hi', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'web_search' }] }] }, 'tools[0].tools[0].type'],
      [{ input: 'Hi', tools: [{ type: 'mcp', server_label: 'x' }], tool_choice: { type: 'mcp' } }, 'tool_choice'],
      [{ input: 'Hi', tools: [WEATHER_TOOL], tool_choice: 5 }, 'tool_choice'],
      [{ input: 'Hi', text: 5 }, 'text'],
      [{ input: 'Hi', text: { format: { type: 'json_schema' } } }, 'text.format.name'],
      [{ input: 'Hi', text: { format: { type: 'xml' } } }, 'text.format.type'],
      [{ input: 'Hi', reasoning: { effort: 'max' } }, 'reasoning.effort'],
      [{ input: 'Hi', metadata: { a: 5 } }, 'metadata.a'],
      [{ input: 'Hi', max_output_tokens: 0 }, 'max_output_tokens'],
      [{ input: 'Hi', temperature: 3 }, 'temperature'],
      [{ input: 'Hi', instructions: 5 }, 'instructions'],
      [{ input: 'Hi', previous_response_id: 5 }, 'previous_response_id'],
      [{ input: 'Hi', background: true }, 'background'],
      [{ input: 'Hi', stream: 'yes' }, 'stream'],
      [{ input: 'Hi', store: 'no' }, 'store'],
    ];
    for (const [body, param, status = 400] of cases) {
      for (const stream of [false, true]) {
        const res = await fetch(`${gw().url}/v1/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODELS.anthropic, ...(stream && !('stream' in body) ? { stream: true } : {}), ...body }),
        });
        const json = (await res.json()) as { error: { param: string | null; type: string } };
        expect([JSON.stringify(body), res.status, json.error.param]).toEqual([JSON.stringify(body), status, param]);
      }
    }
  });

  it('drops a built-in tool a translated channel cannot run (x-service-dropped), and refuses it only when tool_choice forces it', async () => {
    const { data, response } = await openai()
      .responses.create({ model: MODELS.anthropic, input: 'Search', tools: [{ type: 'web_search_preview' }] })
      .withResponse();
    expect(response.headers.get('x-service-dropped')).toBe('web_search_preview');
    expect(data.output_text).toBeTruthy();
    expect((fake.requests.at(-1)!.json as { tools?: unknown }).tools).toBeUndefined();
    const before = fake.requests.length;
    const err = await openai()
      .responses.create({ model: MODELS.anthropic, input: 'Search', tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'tool_choice' });
    expect((err as Error).message).toContain('web_search_preview');
    expect(fake.requests.length).toBe(before);
  });
});
