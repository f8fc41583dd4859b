// Work before admission is bounded (issue 37), against the built server (`node dist/server.mjs`):
//   - a JSON Schema whose $defs refer to themselves, fanned out (507 bytes), to a Gemini-channel
//     model: a quick 400 naming the field on chat and /v1/responses (tools and text.format), a
//     quick answer on the Anthropic mirror (which passes the schema as it is); the process lives;
//   - a prompt of " \u202f" to service-auto, six at once from one free account: /healthz is not held;
//   - GET/DELETE /v1/responses/{id} and input_items check the key's expiry and address ranges;
//   - stored conversations: a turn stores itself only, a chain over the body cap is a 400 naming
//     previous_response_id, the account quota evicts the oldest, input_items pages a chain;
//   - an item_reference the caller's store does not hold never reaches a native upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const GEMINI = PROTOCOL_MODELS.gemini;
const NATIVE = 'gpt-native-pre';
/** Per-account quota of this gateway's store (small, to see eviction). */
const QUOTA_ROWS = 4;
const QUOTA_BYTES = 2 * 1024 * 1024;
/** The request body cap of this gateway (small, so that the fake upstream's own tokenizer keeps up). */
const BODY_CAP = 1024 * 1024;

let db: Awaited<ReturnType<typeof getDb>>;
let fake: FakeUpstream;
let gw: RunningGateway;
let account: TestAccount;

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

beforeAll(async () => {
  db = await getDb();
  fake = await startFakeUpstream();
  const config = testConfig({
    openaiUrls: [fake.url],
    anthropicUrls: [fake.url],
    geminiUrls: [fake.url],
    channelPrefix: 'pre',
    overrides: {
      limits: { max_body_bytes: BODY_CAP },
      responses: { retention_days: 30, max_bytes_per_account: QUOTA_BYTES, max_per_account: QUOTA_ROWS },
    },
  });
  // Prompts of hundreds of KB: the fake upstream counts them in this process, slowly on a loaded machine.
  for (const c of config.channels as { timeouts: Record<string, number> }[]) c.timeouts = { connect_ms: 2000, first_byte_ms: 30_000, idle_ms: 30_000 };
  (config.channels as unknown[]).push({
    name: 'pre-openai-native',
    protocol: 'openai',
    responses: true,
    base_url: `${fake.url}/v1`,
    api_key: 'upstream-secret-native',
    models: [NATIVE],
    priority: 0,
    timeouts: { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 },
  });
  (config.models as unknown[]).push({
    name: NATIVE,
    owned_by: 'openai',
    kind: 'chat',
    context_window: 128000,
    max_output_tokens: 4096,
    input_price_usd_per_million: '2',
    output_price_usd_per_million: '8',
  });
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

function post(path: string, body: unknown, apiKey = account.apiKey): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function expectError(res: Response, status: number, param: string | null, message?: string | RegExp): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody;
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.error.param).toBe(param);
  if (message) expect(body.error.message).toMatch(message);
  return body;
}

async function alive(): Promise<void> {
  const res = await fetch(`${gw.url}/healthz`);
  expect(res.status).toBe(200);
}

/** The schema of issue 37: one definition referring to itself `n` times. */
const fanOut = (n: number) => ({
  $defs: { a: { type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { $ref: '#/$defs/a' }])) } },
  properties: { root: { $ref: '#/$defs/a' } },
});

describe('a self-referencing $defs fan-out to a Gemini model', () => {
  it.each([10, 6])('fan-out %i: a quick 400 naming the field on chat and /v1/responses, an answer on the mirror; the process lives', async (n) => {
    const schema = fanOut(n);
    expect(JSON.stringify(schema).length).toBeLessThan(520);
    const upstreamBefore = fake.requests.length;
    const started = Date.now();
    await expectError(
      await post('/v1/chat/completions', {
        model: GEMINI,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [{ type: 'function', function: { name: 'walk', parameters: schema } }],
      }),
      400,
      'tools[0].function.parameters',
      /too large/,
    );
    await expectError(
      await post('/v1/chat/completions', {
        model: GEMINI,
        messages: [{ role: 'user', content: 'Hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'walk', schema } },
      }),
      400,
      'response_format.json_schema.schema',
    );
    await expectError(
      await post('/v1/responses', { model: GEMINI, input: 'Hi', text: { format: { type: 'json_schema', name: 'walk', schema } } }),
      400,
      'text.format.schema',
      /`text\.format\.schema` is too large/,
    );
    await expectError(
      await post('/v1/responses', { model: GEMINI, input: 'Hi', tools: [{ type: 'function', name: 'walk', parameters: schema }] }),
      400,
      'tools[0].parameters',
    );
    // Nothing of these went upstream.
    expect(fake.requests.length).toBe(upstreamBefore);
    // The mirror gives Gemini the JSON Schema as it came (parametersJsonSchema): nothing is inlined.
    const mirror = await post('/v1/anthropic/v1/messages', {
      model: GEMINI,
      max_tokens: 16,
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ name: 'walk', input_schema: schema }],
    });
    expect(mirror.status).toBe(200);
    expect(fake.requests.at(-1)!.body.length).toBeLessThan(4096);
    // The old code took 110 s (fan-out 10) before dying; a loaded machine stays far below this.
    expect(Date.now() - started).toBeLessThan(30_000);
    await alive();
  });
});

describe('the tokenizer on " \\u202f" to service-auto', () => {
  it('six at once from one free account do not hold /healthz', async () => {
    const free = await createAccount({ tier: 'free', balanceUsd: '1' });
    const body = JSON.stringify({ model: 'service-auto', messages: [{ role: 'user', content: ' \u202f'.repeat(50_000) }], max_tokens: 4 });
    // The fake upstream runs in this process, and its own tokenizer is quadratic on this text: it
    // answers without reading the prompt, so that only the gateway's work is measured.
    fake.setDefault({ type: 'status', status: 400 });
    // The encoder's ranks load on first use (a stall of their own, once per process): loaded first.
    await post('/v1/chat/completions', { model: 'service-auto', messages: [{ role: 'user', content: 'warm up' }], max_tokens: 4 }, free.apiKey).then((r) =>
      r.text(),
    );
    let worst = 0;
    let done = false;
    const all = Promise.all(Array.from({ length: 6 }, () => post('/v1/chat/completions', body, free.apiKey).then((r) => r.status))).finally(
      () => (done = true),
    );
    while (!done) {
      const t = performance.now();
      await fetch(`${gw.url}/healthz`).then((r) => r.text());
      worst = Math.max(worst, performance.now() - t);
      await new Promise((r) => setTimeout(r, 5));
    }
    const statuses = await all;
    fake.setDefault({ type: 'ok' });
    // Each was counted, then answered (the upstream's 400) or refused by the account's limits.
    for (const s of statuses) expect([400, 429]).toContain(s);
    // Before: 35 s of loop per request. The bound leaves room for a loaded machine.
    expect(worst).toBeLessThan(2000);
  });

  it('count_tokens on the mirror, for a model no Anthropic channel serves, counts a body-sized hostile text at once', async () => {
    const t = performance.now();
    const res = await post('/v1/anthropic/v1/messages/count_tokens', { model: GEMINI, messages: [{ role: 'user', content: ' \u202f'.repeat(150_000) }] });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    // 300,000 characters took minutes of loop before.
    expect(performance.now() - t).toBeLessThan(10_000);
    await alive();
  });
});

describe('GET/DELETE /v1/responses/{id} and input_items check the key like POST', () => {
  const routes = (id: string) => [
    { method: 'GET', path: `/v1/responses/${id}` },
    { method: 'DELETE', path: `/v1/responses/${id}` },
    { method: 'GET', path: `/v1/responses/${id}/input_items` },
  ];

  it.each([
    ['an expired key', { expiresAt: new Date(Date.now() - 60_000) }, 401, 'key_expired'],
    ['a key whose address ranges exclude the caller', { allowedIps: ['203.0.113.0/24'] }, 403, 'ip_not_allowed'],
  ])('%s is refused on every route as on POST', async (_name, data, status, code) => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    // A stored response of the account, made while the key was fine, by another key of it.
    const owner = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const stored = (await (await post('/v1/responses', { model: 'gpt-4o-mini', input: 'Hi' }, owner.apiKey)).json()) as { id: string };
    await db.storedResponse.update({ where: { id: stored.id }, data: { userId: acct.userId } });
    await db.apiKey.update({ where: { id: acct.keyId }, data });
    const viaPost = (await (await post('/v1/responses', { model: 'gpt-4o-mini', input: 'Hi' }, acct.apiKey)).json()) as ErrorBody;
    expect(viaPost.error.code).toBe(code);
    for (const r of routes(stored.id)) {
      const res = await fetch(`${gw.url}${r.path}`, { method: r.method, headers: { authorization: `Bearer ${acct.apiKey}` } });
      const body = (await res.json()) as ErrorBody;
      expect([res.status, body.error.code], `${r.method} ${r.path}`).toEqual([status, code]);
    }
    // Still stored: the refused DELETE deleted nothing.
    expect(await db.storedResponse.count({ where: { id: stored.id } })).toBe(1);
  });
});

describe('stored conversations', () => {
  /** About `mb` MB of prose (the fake upstream counts it quickly). */
  const prose = (mb: number, tag: string) => `${tag} ` + 'lorem ipsum dolor sit amet '.repeat(Math.ceil((mb * 1e6) / 27));

  it('a turn stores itself only and links to the one before; a chain past the body cap is a 400 naming previous_response_id', async () => {
    const acct = await createAccount({ tier: 'enterprise', balanceUsd: '50' });
    const turn = async (input: string, previous?: string) =>
      post('/v1/responses', { model: 'gpt-4o-mini', input, ...(previous ? { previous_response_id: previous } : {}) }, acct.apiKey);
    const firstRes = await turn(prose(0.4, 'one'));
    const first = (await firstRes.json()) as { id: string };
    expect(firstRes.status, JSON.stringify(first)).toBe(200);
    const secondRes = await turn(prose(0.4, 'two'), first.id);
    const second = (await secondRes.json()) as { id: string };
    expect(secondRes.status, JSON.stringify(second)).toBe(200);
    // The upstream got the whole conversation (both turns)...
    expect(fake.requests.at(-1)!.body).toContain('one lorem');
    const row = await db.storedResponse.findUniqueOrThrow({ where: { id: second.id } });
    // ...but the second row holds its own turn: not the first again (issue 37: quadratic chains).
    expect(row.previousId).toBe(first.id);
    expect(row.conversation).not.toContain('one lorem');
    expect(row.conversationBytes).toBeLessThan(0.5e6);
    // The chain through a third 0.4 MB turn is over the 1 MiB body cap: refused, nothing sent upstream.
    const before = fake.requests.length;
    await expectError(await turn(prose(0.4, 'three'), second.id), 400, 'previous_response_id');
    expect(fake.requests.length).toBe(before);
    // A small turn still continues it (and keeps its earlier turns as long as itself), and
    // input_items pages the chain turn by turn.
    await db.storedResponse.update({ where: { id: first.id }, data: { expiresAt: new Date(Date.now() + 3_600_000) } });
    const third = (await (await turn('What came first?', second.id)).json()) as { id: string };
    const firstRow = await db.storedResponse.findUniqueOrThrow({ where: { id: first.id } });
    expect(firstRow.expiresAt.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3_600_000);
    const list = async (query: string) =>
      (await (await fetch(`${gw.url}/v1/responses/${third.id}/input_items?${query}`, { headers: { authorization: `Bearer ${acct.apiKey}` } })).json()) as {
        data: { id: string; role: string; content: { text: string }[] }[];
        has_more: boolean;
        last_id: string;
      };
    const newest = await list('limit=1');
    expect(newest.data.map((i) => i.content[0].text)).toEqual(['What came first?']);
    expect(newest.has_more).toBe(true);
    const oldest = await list('order=asc&limit=1');
    expect(oldest.data[0].content[0].text.startsWith('one lorem')).toBe(true);
    const next = await list(`order=asc&limit=2&after=${oldest.last_id}`);
    expect(next.data.map((i) => i.role)).toEqual(['assistant', 'user']);
    expect(next.data[1].content[0].text.startsWith('two lorem')).toBe(true);
    // Many pages of the chain at once: served, /healthz not held.
    const t = performance.now();
    const pages = await Promise.all(Array.from({ length: 30 }, () => list('limit=1')));
    for (const p of pages) expect(p.data).toHaveLength(1);
    const health = performance.now();
    await alive();
    expect(performance.now() - health).toBeLessThan(1000);
    expect(performance.now() - t).toBeLessThan(30_000);
    // Deleting a turn ends the conversations built on it: a 404 naming the missing turn.
    const del = await fetch(`${gw.url}/v1/responses/${second.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${acct.apiKey}` } });
    expect(del.status).toBe(200);
    await expectError(await turn('And now?', third.id), 404, 'previous_response_id', new RegExp(second.id));
  });

  it('an account keeps at most its quota of responses and bytes: the oldest are evicted', async () => {
    const acct = await createAccount({ tier: 'enterprise', balanceUsd: '50' });
    const ids: string[] = [];
    for (let i = 0; i < QUOTA_ROWS + 2; i++) {
      const res = (await (await post('/v1/responses', { model: 'gpt-4o-mini', input: `turn ${i}` }, acct.apiKey)).json()) as { id: string };
      expect(res.id).toMatch(/^resp_/);
      ids.push(res.id);
    }
    const kept = await db.storedResponse.findMany({ where: { userId: acct.userId }, select: { id: true } });
    expect(kept.map((r) => r.id).sort()).toEqual(ids.slice(2).sort());
    const gone = await fetch(`${gw.url}/v1/responses/${ids[0]}`, { headers: { authorization: `Bearer ${acct.apiKey}` } });
    expect(gone.status).toBe(404);
    // Bytes: three 0.9 MB turns are over 2 MiB; the first goes.
    const big: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = (await (await post('/v1/responses', { model: 'gpt-4o-mini', input: prose(0.9, `big${i}`) }, acct.apiKey)).json()) as { id: string };
      expect(res.id).toMatch(/^resp_/);
      big.push(res.id);
    }
    const rows = await db.storedResponse.findMany({ where: { userId: acct.userId }, select: { id: true, conversationBytes: true, responseBytes: true } });
    expect(rows.map((r) => r.id)).not.toContain(big[0]);
    expect(rows.map((r) => r.id)).toEqual(expect.arrayContaining(big.slice(1)));
    expect(rows.reduce((s, r) => s + r.conversationBytes + r.responseBytes, 0)).toBeLessThanOrEqual(QUOTA_BYTES);
  });
});

describe('item_reference', () => {
  it("an id the caller's store does not hold is a 404 naming it and never reaches the native upstream; the owner's own item is found", async () => {
    const owner = await createAccount({ tier: 'enterprise', balanceUsd: '5' });
    const stranger = await createAccount({ tier: 'enterprise', balanceUsd: '5' });
    const native = (await (await post('/v1/responses', { model: NATIVE, input: 'Hi' }, owner.apiKey)).json()) as { id: string; output: { id: string }[] };
    const itemId = native.output[0].id;
    const before = fake.requests.length;
    for (const id of [itemId, 'msg_not_anyones']) {
      await expectError(
        await post(
          '/v1/responses',
          {
            model: NATIVE,
            input: [
              { type: 'item_reference', id },
              { role: 'user', content: 'Go on' },
            ],
          },
          stranger.apiKey,
        ),
        404,
        'input[0].id',
        `Item with id '${id}' not found.`,
      );
    }
    expect(fake.requests.length).toBe(before);
    const res = await post(
      '/v1/responses',
      {
        model: NATIVE,
        input: [
          { type: 'item_reference', id: itemId },
          { role: 'user', content: 'Go on' },
        ],
      },
      owner.apiKey,
    );
    expect(res.status).toBe(200);
    expect(fake.requests.at(-1)!.body).not.toContain('item_reference');
  });
});
