// The OpenAI Agents SDK (`@openai/agents`: its default Responses model and OpenAIChatCompletionsModel)
// and LangChain (`@langchain/openai` ChatOpenAI on chat completions and on the Responses API,
// `@langchain/anthropic` ChatAnthropic) against models whose channels speak OpenAI chat, Anthropic
// Messages and Gemini (one faithful fake upstream serving all three), on both server paths: a text
// turn, a streamed turn and a tool-using turn (the runner, LangChain's createAgent or a bindTools loop runs a function tool
// and gets the final answer). Every HTTP exchange the client makes is recorded through its `fetch`
// option: what it sent, and the cost the gateway put on the reply, which must be what the request log
// and the ledger booked (CLIENT_RECORD=<file> appends each exchange to it as a JSON line: what the
// clients send, for docs/protocols.md). These are the Agents SDK and LangChain rows of docs/protocols.md's matrix.
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, tool, type Model, type OpenAIClient } from '@openai/agents';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PROTOCOL_MODELS, UPSTREAM_PATH, startBothModes, testConfig, type GatewayMode, type Protocol, type RunningGateway } from '../support/gateway';
import { DEFAULT_REPLY, TOOL_CALL_ARGUMENTS, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { expectBooked } from '../support/booking';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const MODELS = PROTOCOL_MODELS;
const TOOL_RESULT = { temp_c: 21 };

// The Agents SDK ships its own `openai` (a major ahead of the repo's): its models get a client of
// that version, as a user's `new OpenAIProvider()` would.
const require_ = createRequire(import.meta.url);
const AgentsOpenAI = createRequire(require_.resolve('@openai/agents-openai'))('openai').OpenAI as new (opts: {
  baseURL: string;
  apiKey: string;
  maxRetries: number;
  fetch: typeof fetch;
}) => OpenAIClient;

/** One HTTP exchange a client made with the gateway. */
interface Exchange {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  headers: Record<string, string>;
  status: number;
  requestId: string | null;
  cost: string | null;
  /** what the gateway could not carry to the upstream (x-service-dropped) */
  dropped: string | null;
}

/** A `fetch` that records what the client sent and the gateway's ids and cost headers. */
function recorder(): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const text = init?.body !== undefined && typeof init.body === 'string' ? init.body : await req.clone().text();
    const res = await fetch(req);
    exchanges.push({
      method: req.method,
      path: new URL(req.url).pathname + new URL(req.url).search,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
      headers: Object.fromEntries(req.headers),
      status: res.status,
      requestId: res.headers.get('x-request-id'),
      cost: res.headers.get('x-service-cost-usd'),
      dropped: res.headers.get('x-service-dropped'),
    });
    if (process.env.CLIENT_RECORD) appendFileSync(process.env.CLIENT_RECORD, JSON.stringify(exchanges.at(-1)) + '\n');
    return res;
  };
  return { fetch: recording, exchanges };
}

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gateways = {} as Record<GatewayMode, RunningGateway>;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  gateways = await startBothModes(testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] }));
  // Enterprise: the Agents SDK and LangChain make some 150 requests here, beyond a pro account's rate.
  account = await createAccount({ tier: 'enterprise', balanceUsd: '50' });
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

function expectUpstream(protocol: Protocol): void {
  expect(fake.requests.at(-1)!.path).toMatch(UPSTREAM_PATH[protocol]);
}

/** Every exchange succeeded and was booked at the cost the gateway told the client (or, on a stream, logged). */
async function expectAllBooked(exchanges: Exchange[], endpoint: string): Promise<void> {
  expect(exchanges.length).toBeGreaterThan(0);
  for (const x of exchanges) {
    expect(x.status, `${x.method} ${x.path}`).toBe(200);
    expect(x.path).toBe(endpoint);
    // Everything these clients send is carried to every upstream protocol: nothing dropped.
    expect(x.dropped, `${x.path} on ${String(x.body?.model)}`).toBeNull();
    let cost = x.cost ?? '';
    // A stream's cost header says `pending` (it is known only at the end): the log row is the
    // reference there, and the ledger must match it.
    if (x.body?.stream === true) expect(cost).toBe('pending');
    else expect(cost).toMatch(/^\d+(\.\d+)?$/);
    if (cost === 'pending') cost = (await waitFor(() => db.requestLog.findFirst({ where: { id: x.requestId! } }), 10_000)).costUsd.toFixed(12);
    await expectBooked(x.requestId, cost, { endpoint });
  }
}

describe.each(['lean', 'next'] as GatewayMode[])('OpenAI Agents SDK and LangChain on every protocol (%s)', (mode) => {
  const gw = () => gateways[mode];

  describe.each(Object.keys(MODELS) as Protocol[])('a model on a %s channel', (protocol) => {
    const model = MODELS[protocol];

    describe.each([
      ['Responses (the default model)', '/v1/responses', (c: OpenAIClient) => new OpenAIResponsesModel(c, model)],
      ['OpenAIChatCompletionsModel', '/v1/chat/completions', (c: OpenAIClient) => new OpenAIChatCompletionsModel(c, model)],
    ] as const)('Agents SDK, %s', (_name, endpoint, makeModel) => {
      function setup(): { model: Model; exchanges: Exchange[]; runner: Runner } {
        const rec = recorder();
        const client = new AgentsOpenAI({ baseURL: `${gw().url}/v1`, apiKey: account.apiKey, maxRetries: 0, fetch: rec.fetch });
        return { model: makeModel(client), exchanges: rec.exchanges, runner: new Runner({ tracingDisabled: true }) };
      }

      it('a text turn: the final output, booked', async () => {
        const { model: m, exchanges, runner } = setup();
        const agent = new Agent({ name: 'Greeter', instructions: 'Be brief.', model: m });
        const result = await runner.run(agent, 'Hi');
        expectUpstream(protocol);
        expect(result.finalOutput).toBe(DEFAULT_REPLY);
        expect(exchanges).toHaveLength(1);
        expect(exchanges[0]!.body).toMatchObject({ model });
        await expectAllBooked(exchanges, endpoint);
      });

      it('a streamed turn: the text as it comes, the same final output, booked', async () => {
        const { model: m, exchanges, runner } = setup();
        const agent = new Agent({ name: 'Greeter', instructions: 'Be brief.', model: m });
        const result = await runner.run(agent, 'Hi', { stream: true });
        let text = '';
        for await (const piece of result.toTextStream()) text += piece;
        await result.completed;
        expectUpstream(protocol);
        expect(text).toBe(DEFAULT_REPLY);
        expect(result.finalOutput).toBe(DEFAULT_REPLY);
        expect(exchanges).toHaveLength(1);
        expect(exchanges[0]!.body).toMatchObject({ model, stream: true });
        await expectAllBooked(exchanges, endpoint);
      });

      it.each([false, true])(
        'a tool-using turn (stream: %s): the runner calls the tool, the model answers with its result, both calls booked',
        async (stream) => {
          const { model: m, exchanges, runner } = setup();
          const calls: unknown[] = [];
          const getWeather = tool({
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: z.object({ city: z.string() }),
            execute: async (args) => {
              calls.push(args);
              return JSON.stringify(TOOL_RESULT);
            },
          });
          const agent = new Agent({ name: 'Weather', instructions: 'Use the tool.', model: m, tools: [getWeather] });
          let output: unknown;
          if (stream) {
            const result = await runner.run(agent, 'Weather in Paris?', { stream: true });
            for await (const _ of result.toTextStream()) void _;
            await result.completed;
            output = result.finalOutput;
          } else {
            output = (await runner.run(agent, 'Weather in Paris?')).finalOutput;
          }
          expectUpstream(protocol);
          expect(calls).toEqual([JSON.parse(TOOL_CALL_ARGUMENTS)]);
          expect(output).toMatch(/^The tool said: .*21/);
          expect(exchanges).toHaveLength(2);
          await expectAllBooked(exchanges, endpoint);
        },
      );
    });

    describe.each([
      ['@langchain/openai ChatOpenAI (chat completions)', '/v1/chat/completions'],
      ['@langchain/openai ChatOpenAI (useResponsesApi)', '/v1/responses'],
      ['@langchain/anthropic ChatAnthropic', '/v1/anthropic/v1/messages'],
    ] as const)('LangChain, %s', (name, endpoint) => {
      function setup() {
        const rec = recorder();
        const chat = name.includes('ChatAnthropic')
          ? new ChatAnthropic({
              model,
              apiKey: account.apiKey,
              anthropicApiUrl: `${gw().url}/v1/anthropic`,
              maxRetries: 0,
              clientOptions: { fetch: rec.fetch },
            })
          : new ChatOpenAI({
              model,
              apiKey: account.apiKey,
              maxRetries: 0,
              useResponsesApi: endpoint === '/v1/responses',
              configuration: { baseURL: `${gw().url}/v1`, fetch: rec.fetch },
            });
        return { chat, exchanges: rec.exchanges };
      }

      it('a text turn: invoke answers an AIMessage, booked', async () => {
        const { chat, exchanges } = setup();
        const answer = await chat.invoke([new HumanMessage('Hi')]);
        expectUpstream(protocol);
        expect(answer.text).toBe(DEFAULT_REPLY);
        expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
        expect(exchanges).toHaveLength(1);
        await expectAllBooked(exchanges, endpoint);
      });

      it('a streamed turn: the chunks add up to the reply, booked', async () => {
        const { chat, exchanges } = setup();
        let text = '';
        let chunks = 0;
        for await (const chunk of await chat.stream([new HumanMessage('Hi')])) {
          text += chunk.text;
          chunks++;
        }
        expectUpstream(protocol);
        expect(text).toBe(DEFAULT_REPLY);
        expect(chunks).toBeGreaterThan(1);
        expect(exchanges).toHaveLength(1);
        expect(exchanges[0]!.body).toMatchObject({ stream: true });
        await expectAllBooked(exchanges, endpoint);
      });

      it.each([false, true])('a tool-using turn (stream: %s): bindTools, the tool runs, the model answers with its result, both booked', async (stream) => {
        const { chat, exchanges } = setup();
        const calls: unknown[] = [];
        const getWeather = lcTool(
          async (args: { city: string }) => {
            calls.push(args);
            return JSON.stringify(TOOL_RESULT);
          },
          { name: 'get_weather', description: 'The weather in a city', schema: z.object({ city: z.string() }) },
        );
        const bound = chat.bindTools([getWeather]);
        const ask = async (messages: BaseMessage[]): Promise<AIMessage> => {
          if (!stream) return bound.invoke(messages);
          let whole: Awaited<ReturnType<typeof bound.invoke>> | undefined;
          for await (const chunk of await bound.stream(messages)) whole = whole === undefined ? chunk : whole.concat(chunk);
          return new AIMessage({ content: whole!.content, tool_calls: whole!.tool_calls ?? [], id: whole!.id });
        };
        const messages: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
        const first = await ask(messages);
        expect(first.tool_calls).toHaveLength(1);
        expect(first.tool_calls![0]).toMatchObject({ name: 'get_weather', args: JSON.parse(TOOL_CALL_ARGUMENTS) });
        messages.push(first);
        for (const call of first.tool_calls!) {
          const result = (await getWeather.invoke(call)) as ToolMessage;
          messages.push(result);
        }
        const final = await ask(messages);
        expectUpstream(protocol);
        expect(calls).toEqual([JSON.parse(TOOL_CALL_ARGUMENTS)]);
        expect(final.tool_calls ?? []).toHaveLength(0);
        expect(final.text).toMatch(/^The tool said: .*21/);
        expect(exchanges).toHaveLength(2);
        await expectAllBooked(exchanges, endpoint);
      });

      it.each([false, true])(
        "a tool-using turn through langchain's createAgent (stream: %s): the agent runs the tool and answers, both booked",
        async (stream) => {
          const { chat, exchanges } = setup();
          const calls: unknown[] = [];
          const getWeather = lcTool(
            async (args: { city: string }) => {
              calls.push(args);
              return JSON.stringify(TOOL_RESULT);
            },
            { name: 'get_weather', description: 'The weather in a city', schema: z.object({ city: z.string() }) },
          );
          const agent = createAgent({ model: chat, tools: [getWeather], systemPrompt: 'Use the tool.' });
          const input = { messages: [new HumanMessage('Weather in Paris?')] };
          let answer: string;
          if (stream) {
            // Token by token, as a chat UI shows it: the model's chunks, not the tool's message.
            answer = '';
            for await (const [chunk, meta] of await agent.stream(input, { streamMode: 'messages' })) {
              if (AIMessageChunk.isInstance(chunk) && (meta as { langgraph_node?: string }).langgraph_node === 'model_request') answer += chunk.text;
            }
          } else {
            const state = await agent.invoke(input);
            answer = state.messages.at(-1)!.text;
          }
          expectUpstream(protocol);
          expect(calls).toEqual([JSON.parse(TOOL_CALL_ARGUMENTS)]);
          expect(answer).toMatch(/^The tool said: .*21/);
          expect(exchanges).toHaveLength(2);
          await expectAllBooked(exchanges, endpoint);
        },
      );
    });
  });
});
