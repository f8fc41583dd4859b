// Claude Code on every model: the requests it really sends (tests/fixtures/clients/claude-code/)
// through the Anthropic mirror onto an OpenAI, an Anthropic and a Gemini channel (one fake upstream
// serving all three), streamed and whole; and what the gateway drops on the way (x-service-dropped).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, UPSTREAM_PATH, startGateway, testConfig, type Protocol, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/gateway/runtime';

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gw: RunningGateway;
let account: TestAccount;

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] }), mode: 'lean' });
  account = await createAccount({ tier: 'pro', balanceUsd: '50' });
});

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
