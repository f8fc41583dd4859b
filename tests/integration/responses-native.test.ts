// Native Responses channels (`responses: true`): /v1/responses passed as it came to an upstream that
// serves POST /v1/responses itself, with the official `openai` client, on both server paths. The
// upstream receives the client's exact bytes; built-in tools (web_search) are served there and only
// there; streams are relayed event by event and billed from the Response's usage; the cost is the
// same in the header, the body, the log and the ledger; a stored response is retrievable.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBothModes, testConfig, type GatewayMode, type RunningGateway } from '../support/gateway';
import { DEFAULT_REPLY, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { expectBooked as expectBookedAs } from '../support/booking';
import { getDb } from '@/lib/db';
import { pico } from '../support/money';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

/** Served only by the native channel. */
const NATIVE = 'gpt-native';
/** Served by a translated OpenAI channel first (priority 10) and by the native channel after it. */
const MIXED = 'gpt-mixed';
/** Served only by translated channels. */
const TRANSLATED = 'gpt-4o-mini';

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gateways = {} as Record<GatewayMode, RunningGateway>;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  // web_search is billed per call: without a price the gateway refuses it.
  const config = testConfig({ openaiUrls: [fake.url], overrides: { tool_prices_usd_per_thousand_calls: { web_search: '10' } } });
  const channels = config.channels as { name: string; models: string[] }[];
  channels[0].models.push(MIXED);
  channels.push({
    name: 'openai-native',
    protocol: 'openai',
    responses: true,
    base_url: `${fake.url}/v1`,
    api_key: 'upstream-secret-native',
    models: [NATIVE, MIXED],
    priority: 0,
    timeouts: { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 },
  } as unknown as { name: string; models: string[] });
  for (const name of [NATIVE, MIXED]) {
    (config.models as unknown[]).push({
      name,
      owned_by: 'openai',
      kind: 'chat',
      context_window: 128000,
      max_output_tokens: 4096,
      input_price_usd_per_million: '2',
      output_price_usd_per_million: '8',
      cache_read_price_usd_per_million: '0.5',
    });
  }
  gateways = await startBothModes(config);
  account = await createAccount({ tier: 'enterprise', balanceUsd: '50' });
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

type WithService = { service: { cost_usd: unknown; channel: string } };

/** The log row (endpoint /v1/responses) and ledger entry of a request carry exactly `costText`; returns the row. */
const expectBooked = (requestId: string | null | undefined, costText: string) =>
  expectBookedAs(requestId, costText, { endpoint: '/v1/responses', tokens: false });

describe.each(['lean', 'next'] as GatewayMode[])('native Responses channels (%s)', (mode) => {
  const gw = () => gateways[mode];
  const openai = () => new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: account.apiKey, maxRetries: 0 });

  it('passes the client body through byte for byte and relays the Response, its cost in the header, the body, the log and the ledger', async () => {
    // Odd spacing and member order: only a pass-through keeps them.
    const raw = '{ "input" : "Hi",  "model":"gpt-native", "metadata": {"case":"bytes"}, "truncation": "auto" }';
    const res = await fetch(`${gw().url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: raw,
    });
    expect(res.status).toBe(200);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.body).toBe(raw);
    expect(sent.headers.authorization).toBe('Bearer upstream-secret-native');
    const body = (await res.json()) as OpenAI.Responses.Response & WithService;
    // The upstream's own id and items.
    expect(body.id).toMatch(/^resp_[A-Za-z0-9]{48}$/);
    expect(body.output[0]!.id).toMatch(/^msg_[A-Za-z0-9]{48}$/);
    expect(body.service.channel).toBe('openai-native');
    const cost = res.headers.get('x-service-cost-usd')!;
    expect(body.service.cost_usd).toBe(Number(cost));
    const row = await expectBooked(res.headers.get('x-request-id'), cost);
    // Billed from the upstream's usage.
    expect(row.promptTokens).toBe(body.usage!.input_tokens);
    expect(row.completionTokens).toBe(body.usage!.output_tokens);

    const { data, response } = await openai().responses.create({ model: NATIVE, instructions: 'Be brief.', input: 'Hi' }).withResponse();
    expect(data.output_text).toBe(DEFAULT_REPLY);
    expect(fake.requests.at(-1)!.json).toEqual({ model: NATIVE, instructions: 'Be brief.', input: 'Hi' });
    await expectBooked(response.headers.get('x-request-id'), response.headers.get('x-service-cost-usd')!);
    // Stored under the upstream's id: retrievable here and on the other server path.
    const stored = await openai().responses.retrieve(data.id);
    expect(stored.id).toBe(data.id);
    expect(stored.output_text).toBe(DEFAULT_REPLY);
    const other = new OpenAI({ baseURL: `${gateways[mode === 'lean' ? 'next' : 'lean'].url}/v1`, apiKey: account.apiKey, maxRetries: 0 });
    expect((await other.responses.retrieve(data.id)).id).toBe(data.id);
  });

  it('serves a web_search tool on a native channel, skipping the translated channels of a model', async () => {
    const searched = await openai().responses.create({ model: NATIVE, input: 'News?', tools: [{ type: 'web_search' }] });
    expect(searched.output.map((o) => o.type)).toEqual(['web_search_call', 'message']);
    expect(searched.output_text).toBe(DEFAULT_REPLY);

    // MIXED: its translated channel comes first, but only the native one can run web_search.
    const mixed = await openai().responses.create({ model: MIXED, input: 'News?', tools: [{ type: 'web_search_preview' }] });
    expect(fake.requests.at(-1)!.path).toBe('/v1/responses');
    expect(mixed.output[0]!.type).toBe('web_search_call');
    expect((mixed as unknown as WithService).service.channel).toBe('openai-native');
    // Without a built-in tool, the translated channel serves it as chat.
    const plain = await openai().responses.create({ model: MIXED, input: 'Hi' });
    expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
    expect((plain as unknown as WithService).service.channel).toBe('openai-1');
  });

  it('serves POST /v1/responses/compact natively, and with a summarising call on a translated channel', async () => {
    const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Write hello.txt' }] }];
    for (const model of [NATIVE, TRANSLATED]) {
      const res = await fetch(`${gw().url}/v1/responses/compact`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
        body: JSON.stringify({ model, input }),
      });
      const body = (await res.json()) as { output: { type: string; role?: string }[] };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(fake.requests.at(-1)!.path).toBe(model === NATIVE ? '/v1/responses/compact' : '/v1/chat/completions');
      expect(body.output.at(-1)!.type).toBe(model === NATIVE ? 'compaction' : 'message');
      await expectBookedAs(res.headers.get('x-request-id'), res.headers.get('x-service-cost-usd')!, { endpoint: '/v1/responses/compact', tokens: false });
    }
  });

  it('drops web_search for a model without a native channel (x-service-dropped); a forced web_search is a 400', async () => {
    const { response } = await openai()
      .responses.create({ model: TRANSLATED, input: 'Search', tools: [{ type: 'web_search' }] })
      .withResponse();
    expect(response.headers.get('x-service-dropped')).toBe('web_search');
    expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
    const before = fake.requests.length;
    const err = await openai()
      .responses.create({ model: TRANSLATED, input: 'Search', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } as never })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'tool_choice' });
    expect((err as Error).message).toContain('web_search');
    expect(fake.requests.length).toBe(before);
  });

  it('relays a stream event by event, billed from response.completed, the stored response the same', async () => {
    const stream = openai().responses.stream({ model: NATIVE, input: 'Hi', tools: [{ type: 'web_search' }] });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => {
      deltas += e.delta;
    });
    const final = await stream.finalResponse();
    expect(fake.requests.at(-1)!.path).toBe('/v1/responses');
    expect(deltas).toBe(DEFAULT_REPLY);
    expect(final.output_text).toBe(DEFAULT_REPLY);
    expect(final.output[0]!.type).toBe('web_search_call');
    // Its tokens ($2 / $0.5 cached / $8 per million) and the search ($10 per 1,000 calls).
    const u = final.usage!;
    const cached = u.input_tokens_details?.cached_tokens ?? 0;
    const expected = BigInt(u.input_tokens - cached) * 2_000_000n + BigInt(cached) * 500_000n + BigInt(u.output_tokens) * 8_000_000n + 10_000_000_000n;
    expect(pico(String((final as unknown as WithService).service.cost_usd))).toBe(expected);
    const stored = await openai().responses.retrieve(final.id);
    expect(final.output).toMatchObject(stored.output);

    const { data: events, response } = await openai().responses.create({ model: NATIVE, input: 'Hi', stream: true }).withResponse();
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of events) {
      expect(ev.sequence_number).toBe(types.length);
      types.push(ev.type);
      if (ev.type === 'response.completed') completed = ev.response;
    }
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.at(-1)).toBe('response.completed');
    const cost = String((completed as unknown as WithService).service.cost_usd);
    const row = await expectBooked(response.headers.get('x-request-id'), cost);
    expect(row.stream).toBe(true);
    expect(row.promptTokens).toBe(completed!.usage!.input_tokens);
    expect(row.completionTokens).toBe(completed!.usage!.output_tokens);
  });

  it('continues a natively served response by previous_response_id over a translated channel', async () => {
    const first = await openai().responses.create({ model: NATIVE, input: 'My name is Ada.' });
    // The stored conversation is ours: translated, and served as chat by MIXED's first channel.
    const second = await openai().responses.create({ model: MIXED, input: 'What is my name?', previous_response_id: first.id });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toContain('My name is Ada.');
    expect(sent.body).toContain(DEFAULT_REPLY);
    expect(second.previous_response_id).toBe(first.id);
  });

  it('GET /v1/responses/{id}/input_items lists a stored response input in the OpenAI list shape', async () => {
    const first = await openai().responses.create({ model: TRANSLATED, input: 'My name is Ada.' });
    const second = await openai().responses.create({
      model: TRANSLATED,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is my name?' }] }],
      previous_response_id: first.id,
    });
    // The official client (newest first, as OpenAI lists by default).
    const page = await openai().responses.inputItems.list(second.id);
    const texts = page.data.map((item) => (item.type === 'message' ? (item.content[0] as { text: string }).text : item.type));
    expect(texts).toEqual(['What is my name?', DEFAULT_REPLY, 'My name is Ada.']);
    expect(page.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is my name?' }] });

    const list = async (query: string) => {
      const res = await fetch(`${gw().url}/v1/responses/${second.id}/input_items?${query}`, { headers: { authorization: `Bearer ${account.apiKey}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as { object: string; data: { id: string; role?: string }[]; first_id: string; last_id: string; has_more: boolean };
    };
    const head = await list('order=asc&limit=2');
    expect(head.object).toBe('list');
    expect(head.data.map((i) => i.role)).toEqual(['user', 'assistant']);
    expect(head.has_more).toBe(true);
    expect([head.first_id, head.last_id]).toEqual([head.data[0].id, head.data[1].id]);
    const rest = await list(`order=asc&after=${encodeURIComponent(head.last_id)}`);
    expect(rest.data.map((i) => i.role)).toEqual(['user']);
    expect(rest.has_more).toBe(false);

    // A natively served response: its input as given.
    const native = await openai().responses.create({ model: NATIVE, input: 'Hi' });
    const nativeItems = await openai().responses.inputItems.list(native.id);
    expect(nativeItems.data).toHaveLength(1);
    expect(nativeItems.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] });

    const missing = await fetch(`${gw().url}/v1/responses/resp_unknown/input_items`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(missing.status).toBe(404);
  });
});
