// What Codex CLI 0.169.0 really sends (tests/fixtures/clients/codex/, recorded against a fake
// upstream), replayed through /v1/responses onto every upstream protocol: OpenAI chat, Anthropic,
// Gemini and a native Responses channel, streamed and whole. Asserts what each upstream receives
// (namespace tools flattened, hosted tools left out and named in x-service-dropped, developer
// messages kept, prompt_cache_key for OpenAI) and what Codex gets back (function_call items under
// the client's own names and namespace, the final message).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startGateway, testConfig, PROTOCOL_MODELS, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, TOOL_CALL_ARGUMENTS, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

type Json = Record<string, unknown>;
interface Fixture {
  headers: Record<string, string>;
  body: Json;
}

const fixture = (name: string): Fixture => JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/clients/codex', name), 'utf8')) as Fixture;
const TURN1 = fixture('turn1.json');
const TURN2 = fixture('turn2.json');
const NATIVE = 'gpt-native';
const STICKY = 'gpt-sticky';
const TARGETS = { ...PROTOCOL_MODELS, native: NATIVE } as const;
type Target = keyof typeof TARGETS;

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gw: RunningGateway;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  // Codex declares web_search: a native channel runs it, so the operator prices it (translated channels drop it).
  const config = testConfig({
    openaiUrls: [fake.url],
    anthropicUrls: [fake.url],
    geminiUrls: [fake.url],
    channelPrefix: 'codexfx',
    overrides: { tool_prices_usd_per_thousand_calls: { web_search: '10' } },
  });
  const channel = (name: string, model: string, priority: number, extra: Json = {}) =>
    (config.channels as unknown[]).push({
      name,
      // X-Service-Provider carries the public label: the channel's name, so turns can be told apart.
      label: name,
      protocol: 'openai',
      base_url: `${fake.url}/v1`,
      api_key: `upstream-secret-${name}`,
      models: [model],
      priority,
      timeouts: { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 },
      ...extra,
    });
  const model = (name: string) =>
    (config.models as unknown[]).push({
      name,
      owned_by: 'openai',
      kind: 'chat',
      context_window: 128000,
      max_output_tokens: 4096,
      input_price_usd_per_million: '2',
      output_price_usd_per_million: '8',
    });
  channel('codexfx-native', NATIVE, 0, { responses: true });
  model(NATIVE);
  // Three channels of one priority: a conversation's prompt_cache_key keeps it on one of them.
  for (const n of [1, 2, 3]) channel(`codexfx-sticky-${n}`, STICKY, 5);
  model(STICKY);
  gw = await startGateway({ config });
  account = await createAccount({ tier: 'enterprise', balanceUsd: '50' });
});

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

/** Posts a fixture as Codex does (its headers, its body with `model` and `stream` set). */
async function replay(f: Fixture, model: string, stream: boolean, over: Json = {}) {
  fake.reset();
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { ...f.headers, accept: stream ? 'text/event-stream' : 'application/json', authorization: `Bearer ${account.apiKey}` },
    body: JSON.stringify({ ...f.body, model, stream, ...over }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const upstream = fake.requests.at(-1) as RecordedRequest;
  let response: Json;
  const events: Json[] = [];
  if (stream) {
    for (const block of text.split('\n\n')) {
      const data = block.split('\n').find((l) => l.startsWith('data:'));
      if (data) events.push(JSON.parse(data.slice(5)) as Json);
    }
    const last = events.at(-1) as Json;
    expect(last.type).toBe('response.completed');
    response = last.response as Json;
    // Every item that was added was also done, in order, and the final output holds them.
    const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
    expect(done).toEqual(response.output);
  } else {
    response = JSON.parse(text) as Json;
  }
  return { res, upstream, upstreamJson: upstream.json as Json, response, events };
}

const outputOf = (r: Json) => r.output as Json[];

/** The function names the upstream was offered, whatever its protocol. */
function offeredNames(target: Target, body: Json): string[] {
  const tools = (body.tools ?? []) as Json[];
  if (target === 'openai') return tools.map((t) => (t.function as Json).name as string);
  if (target === 'anthropic') return tools.map((t) => t.name as string);
  if (target === 'gemini') return tools.flatMap((t) => ((t.functionDeclarations ?? []) as Json[]).map((d) => d.name as string));
  return tools.map((t) => String(t.name ?? t.type));
}

describe.each([false, true])('Codex fixtures through /v1/responses (stream: %s)', (stream) => {
  it.each(['openai', 'anthropic', 'gemini'] as const)('turn 1 on %s: namespace tools flattened, web_search dropped, the call answered', async (target) => {
    const { res, upstreamJson, response } = await replay(TURN1, TARGETS[target], stream);
    const names = offeredNames(target, upstreamJson);
    expect(names).toContain('exec_command');
    expect(names).toContain('multi_agent_v1__spawn_agent');
    expect(names).not.toContain('web_search');
    expect(names.every((n) => /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/.test(n))).toBe(true);
    expect(res.headers.get('x-service-dropped')).toBe('web_search');
    // The request log keeps it on the attempt.
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id: res.headers.get('x-request-id')! } }), 10_000);
    expect((row.attempts as { dropped?: string[] }[])[0]!.dropped).toEqual(['web_search']);
    // Codex's developer messages reach the model as its system text.
    const system = JSON.stringify(target === 'openai' ? upstreamJson.messages : target === 'anthropic' ? upstreamJson.system : upstreamJson.systemInstruction);
    expect(system).toContain('You are a coding agent running in the Codex CLI');
    if (target === 'openai') expect(upstreamJson.prompt_cache_key).toBe(TURN1.body.prompt_cache_key);
    const call = outputOf(response).find((o) => o.type === 'function_call') as Json;
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command', arguments: TOOL_CALL_ARGUMENTS, status: 'completed' });
    expect(call.namespace).toBeUndefined();
  });

  it.each(['openai', 'anthropic', 'gemini'] as const)('a namespaced call on %s comes back under its name and namespace', async (target) => {
    const { upstreamJson, response, events } = await replay(TURN1, TARGETS[target], stream, {
      tool_choice: { type: 'function', namespace: 'multi_agent_v1', name: 'spawn_agent' },
    });
    if (target === 'openai') expect(upstreamJson.tool_choice).toEqual({ type: 'function', function: { name: 'multi_agent_v1__spawn_agent' } });
    const call = outputOf(response).find((o) => o.type === 'function_call') as Json;
    expect(call).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: TOOL_CALL_ARGUMENTS });
    if (stream) {
      const argsDone = events.find((e) => e.type === 'response.function_call_arguments.done') as Json;
      expect(argsDone.name).toBe('spawn_agent');
      const added = events.find((e) => e.type === 'response.output_item.added' && (e.item as Json).type === 'function_call') as Json;
      expect(added.item).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1' });
    }
  });

  it.each(['openai', 'anthropic', 'gemini'] as const)('turn 2 on %s: the replayed reasoning, call and output carry the conversation on', async (target) => {
    const { upstreamJson, response } = await replay(TURN2, TARGETS[target], stream);
    const sent = JSON.stringify(upstreamJson);
    expect(sent).toContain('exec_command');
    expect(sent).toContain('Process exited with code 0');
    const message = outputOf(response).find((o) => o.type === 'message') as Json;
    expect(JSON.stringify(message.content)).toContain('The tool said:');
  });

  it("carries Gemini's thought signature through Codex's stateless turns in the sealed reasoning item", async () => {
    const reasoning = { effort: 'low', summary: 'auto' };
    const first = await replay(TURN1, TARGETS.gemini, stream, { reasoning });
    const output = outputOf(first.response);
    const sealed = output.at(-1) as Json;
    expect(sealed).toMatchObject({ type: 'reasoning', summary: [] });
    expect(sealed.encrypted_content).toMatch(/^gwr1\./);
    const call = output.find((o) => o.type === 'function_call') as Json;
    const input = [...(TURN1.body.input as Json[]), ...output, { type: 'function_call_output', call_id: call.call_id, output: 'done' }];
    const second = await replay(TURN1, TARGETS.gemini, stream, { reasoning, input });
    const parts = (second.upstreamJson.contents as Json[]).flatMap((c) => c.parts as Json[]);
    const replayed = parts.find((p) => p.functionCall !== undefined) as Json;
    expect(replayed.thoughtSignature).toMatch(/^[A-Za-z0-9+/]+=*$/);
  });

  it('passes both turns to a native Responses channel as Codex sent them (web_search kept)', async () => {
    for (const f of [TURN1, TURN2]) {
      const { res, upstream, upstreamJson } = await replay(f, NATIVE, stream);
      expect(upstream.path).toBe('/v1/responses');
      expect(upstreamJson.tools).toEqual(f.body.tools);
      expect(upstreamJson.input).toEqual(f.body.input);
      expect(upstreamJson.include).toEqual(['reasoning.encrypted_content']);
      expect(upstreamJson.prompt_cache_key).toBe(f.body.prompt_cache_key);
      expect(res.headers.get('x-service-dropped')).toBeNull();
    }
  });
});

describe('POST /v1/responses/compact', () => {
  // Codex's CompactionInput (codex-rs/codex-api): model, input, instructions, tools, parallel_tool_calls, reasoning.
  const compactBody = (model: string) => ({
    model,
    input: TURN2.body.input,
    tools: TURN2.body.tools,
    parallel_tool_calls: true,
    reasoning: { summary: 'auto' },
    prompt_cache_key: TURN2.body.prompt_cache_key,
  });
  const compact = async (model: string) => {
    fake.reset();
    const res = await fetch(`${gw.url}/v1/responses/compact`, {
      method: 'POST',
      headers: { ...TURN2.headers, accept: 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify(compactBody(model)),
    });
    return { res, body: (await res.json()) as Json, upstream: fake.requests.at(-1) as RecordedRequest };
  };

  it.each(['openai', 'anthropic', 'gemini'] as const)(
    'on %s: one summarising call with the same model, billed; the user messages kept and the summary added',
    async (target) => {
      const { res, body, upstream } = await compact(TARGETS[target]);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(Number(res.headers.get('x-service-cost-usd'))).toBeGreaterThan(0);
      expect(fake.requests).toHaveLength(1);
      expect(upstream.body).toContain('Your context is about to be replaced by a summary');
      expect(body.object).toBe('response.compaction');
      const output = body.output as Json[];
      const users = (TURN2.body.input as Json[]).filter((i) => i.role === 'user');
      expect(output.slice(0, -1)).toEqual(users.map((u) => ({ type: 'message', role: 'user', content: u.content })));
      const summary = output.at(-1) as Json;
      expect(summary).toMatchObject({ type: 'message', role: 'user' });
      expect((summary.content as Json[])[0]!.text).toMatch(/^Summary of the conversation so far/);
      expect((body.usage as Json).input_tokens).toBeGreaterThan(0);
    },
  );

  it('is passed to a native Responses channel, which compacts it itself', async () => {
    const { res, body, upstream } = await compact(NATIVE);
    expect(res.status).toBe(200);
    expect(upstream.path).toBe('/v1/responses/compact');
    expect(upstream.json).toEqual(compactBody(NATIVE));
    expect((body.output as Json[]).at(-1)!.type).toBe('compaction');
    expect(Number(res.headers.get('x-service-cost-usd'))).toBeGreaterThan(0);
  });

  it('refuses what would point into the upstream store all tenants share (previous_response_id, item references), naming the field', async () => {
    for (const [extra, param] of [
      [{ previous_response_id: 'resp_someone_else' }, 'previous_response_id'],
      [{ input: [{ type: 'item_reference', id: 'msg_someone_else' }] }, 'input[0]'],
    ] as const) {
      fake.reset();
      const res = await fetch(`${gw.url}/v1/responses/compact`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
        body: JSON.stringify({ ...compactBody(NATIVE), ...extra }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: Json }).error.param).toBe(param);
      expect(fake.requests).toHaveLength(0);
    }
  });

  it('answers a body without input with a 400 naming it', async () => {
    const res = await fetch(`${gw.url}/v1/responses/compact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify({ model: TARGETS.anthropic, input: [] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: Json }).error).toMatchObject({ param: 'input', type: 'invalid_request_error' });
  });
});

describe('prompt_cache_key keeps a conversation on one channel', () => {
  const served = async (key: string) => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify({ model: STICKY, input: 'Hi', prompt_cache_key: key, store: false }),
    });
    expect(res.status).toBe(200);
    await res.text();
    return res.headers.get('x-service-provider');
  };

  it('serves every turn of one key on the same channel, spreads keys over the channels, and falls back when its channel fails', async () => {
    fake.reset();
    const first = await served('session-a');
    for (let i = 0; i < 5; i++) expect(await served('session-a')).toBe(first);
    expect(fake.requests.every((r) => (r.json as Json).prompt_cache_key === 'session-a')).toBe(true);
    const spread = new Set<string | null>();
    for (let i = 0; i < 12; i++) spread.add(await served(`session-${i}`));
    expect(spread.size).toBeGreaterThan(1);
    // Its channel fails: the next channel in the usual order answers.
    fake.queue({ type: 'status', status: 503 });
    const fallback = await served('session-a');
    expect(fallback).not.toBe(first);
    expect(fallback).toMatch(/^codexfx-sticky-/);
  });
});
