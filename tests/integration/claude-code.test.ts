// Claude Code on every model: the requests it really sends (tests/fixtures/clients/claude-code/)
// through the Anthropic mirror onto an OpenAI, an Anthropic and a Gemini channel (one fake upstream
// serving all three), streamed and whole; and what the gateway drops on the way (x-service-dropped).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, ROOT, UPSTREAM_PATH, startGateway, testConfig, type Protocol, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gw: RunningGateway;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  // fileTask: the recorded prompts ask for /tmp/compat-workdir/hello.txt, which the fake answers with a Write call.
  fake = await startFakeUpstream({ fileTask: true });
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] }), mode: 'lean' });
  account = await createAccount({ tier: 'pro', balanceUsd: '50' });
});

beforeEach(() => fake.reset());

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await db?.$disconnect();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  });
}

async function attemptsOf(requestId: string | null): Promise<{ dropped?: string[] }[]> {
  const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
  return row.attempts as { dropped?: string[] }[];
}

const CONTEXT_MANAGEMENT = { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] };

describe('what the gateway drops is visible', () => {
  it.each(['openai', 'gemini'] as Protocol[])(
    'context_management to a %s channel: dropped, named in x-service-dropped (whole and streamed) and in the log',
    async (protocol) => {
      for (const stream of [false, true]) {
        const res = await post('/v1/anthropic/v1/messages', {
          model: PROTOCOL_MODELS[protocol],
          max_tokens: 100,
          stream,
          context_management: CONTEXT_MANAGEMENT,
          messages: [{ role: 'user', content: 'Hi' }],
        });
        expect(res.status).toBe(200);
        await res.text();
        expect(res.headers.get('x-service-dropped')).toBe('context_management');
        const sent = fake.requests.at(-1)!;
        expect(sent.path).toMatch(UPSTREAM_PATH[protocol]);
        expect(sent.body).not.toContain('context_management');
        expect((await attemptsOf(res.headers.get('x-request-id')))[0].dropped).toEqual(['context_management']);
      }
    },
  );

  it('nothing dropped on an Anthropic channel: no header, context_management forwarded', async () => {
    const res = await post('/v1/anthropic/v1/messages', {
      model: PROTOCOL_MODELS.anthropic,
      max_tokens: 100,
      context_management: CONTEXT_MANAGEMENT,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-dropped')).toBeNull();
    expect(fake.requests.at(-1)!.body).toContain('clear_thinking_20251015');
    expect((await attemptsOf(res.headers.get('x-request-id')))[0].dropped).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// The recorded requests (npm run compat with COMPAT_RECORD), replayed on every channel protocol.

interface Recorded {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> & { messages: { role: string; content: unknown }[]; tools: { name: string; defer_loading?: boolean }[] };
}

const FIXTURES = path.join(ROOT, 'tests/fixtures/clients/claude-code');
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ name: f.replace(/\.json$/, ''), ...(JSON.parse(readFileSync(path.join(FIXTURES, f), 'utf8')) as Recorded) }));
const PROTOCOLS = Object.keys(PROTOCOL_MODELS) as Protocol[];
const FILE = '/tmp/compat-workdir/hello.txt';

/** The headers Claude Code sent that the SDK would otherwise set itself (the betas, its identity). */
function clientHeaders(rec: Recorded): Record<string, string> {
  const { 'anthropic-beta': beta, 'user-agent': ua, 'x-app': app, 'x-claude-code-session-id': session } = rec.headers;
  return { 'anthropic-beta': beta!, 'user-agent': ua!, 'x-app': app!, 'x-claude-code-session-id': session! };
}

function sdk(): Anthropic {
  return new Anthropic({ baseURL: `${gw.url}/v1/anthropic`, apiKey: account.apiKey, maxRetries: 0 });
}

function upstreamJson(r: RecordedRequest): Record<string, unknown> {
  return JSON.parse(r.body) as Record<string, unknown>;
}

/** What each protocol's upstream must have received for a recorded request. */
function expectUpstream(protocol: Protocol, rec: Recorded, sent: RecordedRequest): void {
  expect(sent.path).toMatch(UPSTREAM_PATH[protocol]);
  const up = upstreamJson(sent);
  const tools = rec.body.tools.map((t) => t.name);
  const systemInMessages = rec.body.messages.some((m) => m.role === 'system');
  if (protocol === 'anthropic') {
    // Every beta forwarded; the body as Claude Code sent it, but for what Anthropic would refuse.
    expect(sent.headers['anthropic-beta']).toBe(rec.headers['anthropic-beta']);
    expect(up.context_management).toEqual(rec.body.context_management);
    expect(up.thinking).toEqual(rec.body.thinking);
    expect((up.tools as { name: string; defer_loading?: boolean }[]).map((t) => [t.name, t.defer_loading])).toEqual(
      rec.body.tools.map((t) => [t.name, t.defer_loading]),
    );
    const messages = up.messages as { role: string; content: { type: string; signature?: string }[] }[];
    expect(messages.map((m) => m.role)).toEqual(rec.body.messages.map((m) => (m.role === 'system' ? 'user' : m.role)));
    expect(messages.flatMap((m) => m.content).some((b) => b.type === 'thinking' && b.signature?.startsWith('gemini:'))).toBe(false);
    return;
  }
  expect(up).not.toHaveProperty('context_management');
  if (protocol === 'openai') {
    const messages = up.messages as { role: string; content: unknown; tool_calls?: unknown[] }[];
    // The top-level system first, then the conversation with its system message where it stood.
    const roles = rec.body.messages.flatMap((m) =>
      m.role === 'user' && Array.isArray(m.content) && (m.content as { type: string }[]).every((b) => b.type === 'tool_result') ? ['tool'] : [m.role],
    );
    expect(messages.map((m) => m.role)).toEqual(['system', ...roles]);
    if (systemInMessages) expect(String(messages[roles.indexOf('system') + 1]!.content)).toMatch(/^# Environment/);
    expect((up.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(tools);
    expect(up).not.toHaveProperty('reasoning_effort'); // gpt-4o-mini is not tagged reasoning
    expect(up.max_completion_tokens).toBe(4096); // Claude Code's 32,000, lowered to the model's cap
    return;
  }
  const contents = up.contents as { role: string; parts: Record<string, unknown>[] }[];
  // Roles alternate; the system message became user text in its place.
  contents.forEach((c, i) => i > 0 && expect(c.role).not.toBe(contents[i - 1]!.role));
  if (systemInMessages) expect(contents[0]!.parts.some((p) => typeof p.text === 'string' && p.text.startsWith('# Environment'))).toBe(true);
  expect((up.systemInstruction as { parts: unknown[] }).parts).toHaveLength((rec.body.system as unknown[]).length);
  expect((up.tools as { functionDeclarations: { name: string }[] }[])[0]!.functionDeclarations.map((d) => d.name)).toEqual(tools);
  // display "omitted": a budget, no thought text asked for.
  expect((up.generationConfig as { thinkingConfig: unknown }).thinkingConfig).toEqual({ thinkingBudget: 24576 });
  const signed = rec.body.messages
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; signature?: string }[]) : []))
    .find((b) => b.type === 'thinking' && b.signature?.startsWith('gemini:'));
  if (signed) {
    const call = contents.flatMap((c) => c.parts).find((p) => p.functionCall !== undefined)!;
    expect(call.thoughtSignature).toBe(signed.signature!.slice('gemini:'.length));
  }
}

/** What x-service-dropped names: context_management off Anthropic; thinking and effort to a model that does not reason. */
function droppedOn(protocol: Protocol, rec: Recorded): string | null {
  if (protocol === 'anthropic') return null;
  if (protocol === 'gemini') return 'context_management';
  return ['context_management', 'thinking', ...(rec.body.output_config ? ['output_config.effort'] : [])].join(',');
}

/** What Claude Code gets back: a Write call on a first turn, the closing text after the tool result. */
function expectReply(rec: Recorded, message: Anthropic.Beta.BetaMessage, protocol: Protocol): void {
  const last = rec.body.messages.at(-1)!;
  const afterToolResult = Array.isArray(last.content) && (last.content as { type: string }[]).some((b) => b.type === 'tool_result');
  expect(message.type).toBe('message');
  expect(message.model).toBe(PROTOCOL_MODELS[protocol]);
  if (afterToolResult) {
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content.at(-1)).toMatchObject({ type: 'text', text: expect.stringContaining('File created successfully') });
    return;
  }
  expect(message.stop_reason).toBe('tool_use');
  expect(message.content.at(-1)).toMatchObject({ type: 'tool_use', name: 'Write', input: { file_path: FILE, content: 'hello' } });
  // Gemini signs the call: a thinking block before it carries the signature back next turn.
  if (protocol === 'gemini') expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: '', signature: expect.stringMatching(/^gemini:./) });
}

describe.each(fixtures)('Claude Code 2.1.328 recorded: $name', (rec) => {
  it.each(PROTOCOLS)('on a %s channel, whole and streamed (POST /v1/messages?beta=true)', async (protocol) => {
    const model = PROTOCOL_MODELS[protocol];
    const body = { ...rec.body, model } as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming;
    const whole = await sdk()
      .beta.messages.create({ ...body, stream: false }, { headers: clientHeaders(rec), timeout: 60_000 })
      .withResponse();
    expect(fake.requests.at(-1)!.path).toMatch(UPSTREAM_PATH[protocol]);
    expectUpstream(protocol, rec, fake.requests.at(-1)!);
    expectReply(rec, whole.data, protocol);
    expect(whole.response.headers.get('x-service-dropped')).toBe(droppedOn(protocol, rec));

    const stream = sdk().beta.messages.stream({ ...body, stream: true } as Anthropic.Beta.MessageCreateParamsStreaming, { headers: clientHeaders(rec) });
    const streamed = await stream.finalMessage();
    const sent = fake.requests.at(-1)!;
    expect(upstreamJson(sent).stream ?? sent.path.includes('streamGenerateContent')).toBeTruthy();
    expectUpstream(protocol, rec, sent);
    expectReply(rec, streamed, protocol);
    // The same blocks (ids and Gemini's signatures are minted per reply).
    const minted = (b: Anthropic.Beta.BetaContentBlock) =>
      b.type === 'tool_use' ? { ...b, id: expect.any(String) } : b.type === 'thinking' ? { ...b, signature: expect.stringMatching(/^gemini:./) } : b;
    expect(streamed.content).toEqual(whole.data.content.map(minted));
    const { response } = await stream.withResponse();
    expect(response.headers.get('x-service-dropped')).toBe(droppedOn(protocol, rec));
  });

  it.each(PROTOCOLS)('count_tokens on a %s channel (and at /v1/anthropic/messages/count_tokens)', async (protocol) => {
    const { model: _m, max_tokens: _t, stream: _s, context_management: _c, ...rest } = rec.body;
    for (const path of ['/v1/anthropic/v1/messages/count_tokens?beta=true', '/v1/anthropic/messages/count_tokens']) {
      const res = await post(path, { ...rest, model: PROTOCOL_MODELS[protocol] }, clientHeaders(rec));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(100);
    }
  });
});

describe('paths', () => {
  it('/v1/anthropic/messages is /v1/anthropic/v1/messages (@ai-sdk/anthropic appends /messages to its base URL)', async () => {
    for (const path of ['/v1/anthropic/messages', '/v1/anthropic/messages?beta=true', '/v1/anthropic/v1/messages?beta=true']) {
      const res = await post(path, { model: PROTOCOL_MODELS.openai, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { type: string }).type).toBe('message');
    }
    const row = await waitFor(() => db.requestLog.findFirst({ where: { userId: account.userId, endpoint: '/v1/anthropic/v1/messages' } }), 10_000);
    expect(row).toBeTruthy();
    expect(await db.requestLog.count({ where: { userId: account.userId, endpoint: '/v1/anthropic/messages' } })).toBe(0);
  });
});
