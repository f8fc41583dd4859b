// Per-key controls end to end against the production build and the real Redis: the keys API
// (create, edit, list with spend; 400 naming the field), every control at its boundary (model
// allowlist with service-auto and /v1/models, expiry, IPv4/IPv6 ranges with and without
// TRUST_PROXY, rpm, concurrency, lifetime and monthly budgets), exactness across two gateway
// instances sharing Redis, the OpenAI and Anthropic envelopes, and edits holding on the very next
// request on every instance (through the version marker, without the pub/sub message).

import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { pico } from '../support/money';
import { getDb } from '@/lib/db';
import { closeEvents, keyStaleKey } from '@/lib/events';
import { hashApiKey } from '@/lib/keys/api-key';
import { getLimiter } from '@/lib/limits/runtime';

let up: FakeUpstream;
let gwA: RunningGateway;
let gwB: RunningGateway;
/** Behind a "proxy": X-Forwarded-For trusted. */
let gwProxy: RunningGateway;
let redis: Redis;

/** Replies to a message whose content is "slow" after 1.5 s: requests overlap for the concurrency and budget cases. */
const SLOW_MS = 1500;

interface OpenAIError {
  error: { message: string; type: string; param: unknown; code: string };
}

const chatBody = (model = 'deepseek-chat', content = 'Hi', extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });

function chat(gw: RunningGateway, apiKey: string, body: unknown = chatBody(), headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
    body: JSON.stringify(body),
  });
}

function anthropic(gw: RunningGateway, apiKey: string, model: string): Promise<Response> {
  return fetch(`${gw.url}/v1/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

/**
 * A request right after an edit: an instance whose cached copy would refuse it, and that has not had
 * the invalidation message yet, answers 503 "just edited" once (lib/auth/admission.ts); the retry is served.
 */
async function chatAfterEdit(gw: RunningGateway, apiKey: string, body: unknown): Promise<Response> {
  const res = await chat(gw, apiKey, body);
  if (res.status !== 503) return res;
  expect(((await res.json()) as OpenAIError).error.message).toContain('just edited');
  return chat(gw, apiKey, body);
}

async function expectError(res: Response, status: number, code: string): Promise<OpenAIError['error']> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as OpenAIError;
  expect(body.error.code, text).toBe(code);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return body.error;
}

// ---- the account API (session cookie) ------------------------------------------------------

// The account API is called on the instance behind the "proxy", each login from an address of its
// own: the per-IP login limit (10 a minute) would otherwise refuse this file's logins.
let loginSeq = 0;
async function login(a: TestAccount): Promise<string> {
  const ip = `198.18.${Math.floor(loginSeq / 250) % 250}.${(loginSeq++ % 250) + 1}`;
  const res = await fetch(`${gwProxy.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: gwProxy.url, 'x-forwarded-for': ip },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

function api(cookie: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${gwProxy.url}${path}`, {
    method,
    headers: { cookie, origin: gwProxy.url, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

interface KeyJson {
  id: string;
  name: string;
  key?: string;
  budget_usd: string | null;
  monthly_budget_usd: string | null;
  models: string[];
  rpm: number | null;
  concurrency: number | null;
  allowed_ips: string[];
  expires_at: string | null;
  spend: { total_usd: string; total_cny: string; month_usd: string; month_cny: string; month: string };
}

/** A pro account (its tier limits far above the keys' own) signed in, with a key carrying `controls`. */
async function keyWith(controls: Record<string, unknown>): Promise<{ account: TestAccount; cookie: string; key: KeyJson & { key: string } }> {
  const account = await createAccount({ tier: 'pro', balanceUsd: '50' });
  const cookie = await login(account);
  const res = await api(cookie, 'POST', '/api/keys', { name: 'ci', ...controls });
  expect(res.status, await res.clone().text()).toBe(201);
  return { account, cookie, key: (await res.json()) as KeyJson & { key: string } };
}

async function patchKey(cookie: string, id: string, body: Record<string, unknown>): Promise<KeyJson> {
  const res = await api(cookie, 'PATCH', `/api/keys/${id}`, body);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as KeyJson;
}

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  up = await startFakeUpstream({
    faultFor: (req) => (req.body.includes('"slow"') ? { type: 'delay', ms: SLOW_MS } : undefined),
  });
  // gwA and gwB refuse what a budget cannot cover at its largest (the reservation's exactness is
  // tested there); gwProxy has the default, lowering the output cap to fit instead.
  const config = testConfig({ openaiUrls: [up.url], anthropicUrls: [up.url], overrides: { clamp_output_to_budget: false } });
  const clamping = testConfig({ openaiUrls: [up.url], anthropicUrls: [up.url] });
  [gwA, gwB, gwProxy] = await Promise.all([startGateway({ config }), startGateway({ config }), startGateway({ config: clamping, env: { TRUST_PROXY: '1' } })]);
});

afterAll(async () => {
  await Promise.all([gwA?.stop(), gwB?.stop(), gwProxy?.stop()]);
  await up?.close();
  redis?.disconnect();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

beforeEach(() => up.reset());

describe('keys API', () => {
  it('creates a key with every control, returns them with its spend, and edits them', async () => {
    const { cookie, key } = await keyWith({
      budget_usd: 25,
      monthly_budget_usd: '12.5',
      models: ['deepseek-chat'],
      rpm: 10,
      concurrency: 3,
      allowed_ips: ['203.0.113.0/24', '2001:db8::/32'],
      expires_at: '2099-01-31T23:59:59Z',
    });
    expect(key.key).toMatch(/^sk-gw-/);
    expect(key).toMatchObject({
      budget_usd: '25',
      monthly_budget_usd: '12.5',
      models: ['deepseek-chat'],
      rpm: 10,
      concurrency: 3,
      allowed_ips: ['203.0.113.0/24', '2001:db8::/32'],
      expires_at: '2099-01-31T23:59:59.000Z',
    });
    expect(key.spend).toMatchObject({ total_usd: '0', month_usd: '0' });

    const edited = await patchKey(cookie, key.id, { rpm: null, models: null, allowed_ips: [], name: 'renamed' });
    expect(edited).toMatchObject({ name: 'renamed', rpm: null, models: [], allowed_ips: [], budget_usd: '25', concurrency: 3 });

    const list = (await (await api(cookie, 'GET', '/api/keys')).json()) as { data: KeyJson[] };
    expect(list.data.find((k) => k.id === key.id)).toMatchObject({ name: 'renamed', budget_usd: '25', monthly_budget_usd: '12.5' });
  });

  it.each([
    [{ allowed_ips: ['10.0.0.0/33'] }, 'allowed_ips'],
    [{ models: ['no-such-model'] }, 'models'],
    [{ budget_usd: -5 }, 'budget_usd'],
    [{ rpm: 0 }, 'rpm'],
    [{ expires_at: 'next week' }, 'expires_at'],
  ])('refuses %j with 400 naming %s, on create and on edit', async (body, field) => {
    const { cookie, key } = await keyWith({});
    for (const res of [await api(cookie, 'POST', '/api/keys', { name: 'x', ...body }), await api(cookie, 'PATCH', `/api/keys/${key.id}`, body)]) {
      const text = await res.text();
      expect(res.status, text).toBe(400);
      const err = (JSON.parse(text) as { error: { code: string; message: string; param: string } }).error;
      expect(err).toMatchObject({ code: 'invalid_request', param: field });
      expect(err.message).toContain(field);
    }
  });

  it("another account's key is 404 to PATCH", async () => {
    const { key } = await keyWith({});
    const other = await createAccount();
    const res = await api(await login(other), 'PATCH', `/api/keys/${key.id}`, { rpm: 1 });
    expect(res.status).toBe(404);
  });
});

describe('model allowlist', () => {
  it('403 model_not_allowed naming the model on /v1; /v1/models lists only the allowed; service-auto picks among them', async () => {
    const { key } = await keyWith({ models: ['deepseek-chat', 'gpt-4o'] });
    const err = await expectError(await chat(gwA, key.key, chatBody('gpt-4o-mini')), 403, 'model_not_allowed');
    expect(err.message).toContain('"gpt-4o-mini"');
    expect(err.type).toBe('permission_error');

    const ok = await chat(gwB, key.key, chatBody('deepseek-chat'));
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();

    const models = (await (await fetch(`${gwA.url}/v1/models`, { headers: { authorization: `Bearer ${key.key}` } })).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id).sort()).toEqual(['deepseek-chat', 'gpt-4o']);

    // Without the allowlist service-auto picks the cheapest model (gpt-4o-mini); here, the cheapest allowed.
    const auto = await chat(gwA, key.key, chatBody('service-auto'));
    expect(auto.status).toBe(200);
    expect(auto.headers.get('x-service-model-id')).toBe('deepseek-chat');
    await auto.arrayBuffer();
  });

  it('403 permission_error in the Anthropic envelope on the mirror', async () => {
    const { key } = await keyWith({ models: ['claude-haiku-4-5'] });
    const res = await anthropic(gwA, key.key, 'claude-sonnet-4-5');
    expect(res.status).toBe(403);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('permission_error');
    expect(body.error.message).toContain('"claude-sonnet-4-5"');
    const ok = await anthropic(gwB, key.key, 'claude-haiku-4-5');
    expect(ok.status, await ok.clone().text()).toBe(200);
  });
});

describe('expiry', () => {
  it('answers 401 key_expired from the expiry on, on every instance and both envelopes', async () => {
    const { cookie, key } = await keyWith({});
    const expiresAt = Date.now() + 4000;
    await patchKey(cookie, key.id, { expires_at: new Date(expiresAt).toISOString() });
    const before = await chat(gwA, key.key);
    expect(before.status).toBe(200);
    await before.arrayBuffer();
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
    for (const gw of [gwA, gwB]) {
      const err = await expectError(await chat(gw, key.key), 401, 'key_expired');
      expect(err.type).toBe('authentication_error');
    }
    const res = await anthropic(gwB, key.key, 'claude-haiku-4-5');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    expect((await fetch(`${gwA.url}/v1/models`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(401);
  });
});

describe('allowed IP ranges', () => {
  it('IPv4 and IPv6 ranges from X-Forwarded-For behind TRUST_PROXY, at the prefix boundary', async () => {
    const { key } = await keyWith({ allowed_ips: ['203.0.113.0/24', '2001:db8:abcd::/48'] });
    const from = async (ip: string) => {
      // One trusted proxy: the address it saw is the entry it appended (the last), after whatever the client sent.
      const res = await chat(gwProxy, key.key, chatBody(), { 'x-forwarded-for': `203.0.113.1, ${ip}` });
      const text = await res.text();
      return { status: res.status, text };
    };
    expect((await from('203.0.113.0')).status).toBe(200);
    expect((await from('203.0.113.255')).status).toBe(200);
    expect((await from('2001:db8:abcd:ffff::1')).status).toBe(200);
    for (const ip of ['203.0.114.0', '203.0.112.255', '2001:db8:abce::1', '198.51.100.7']) {
      const r = await from(ip);
      expect(r.status, `${ip}: ${r.text}`).toBe(403);
      expect((JSON.parse(r.text) as OpenAIError).error.code).toBe('ip_not_allowed');
    }
  });

  it('without TRUST_PROXY the connection address counts, whatever X-Forwarded-For says', async () => {
    const { key } = await keyWith({ allowed_ips: ['203.0.113.0/24'] });
    await expectError(await chat(gwA, key.key, chatBody(), { 'x-forwarded-for': '203.0.113.9' }), 403, 'ip_not_allowed');
    const local = await keyWith({ allowed_ips: ['127.0.0.0/8', '::1'] });
    const res = await chat(gwA, local.key.key);
    expect(res.status, await res.clone().text()).toBe(200);
  });
});

describe('allowed IP ranges under next start', () => {
  let gwNext: RunningGateway | undefined;
  afterAll(async () => {
    await gwNext?.stop();
  });

  it(
    'without TRUST_PROXY the route-handler path, which sees no socket address, refuses keys with ranges: X-Forwarded-For is not believed',
    { timeout: 120_000 },
    async () => {
      gwNext = await startGateway({ config: testConfig({ openaiUrls: [up.url] }), mode: 'next' });
      const { key } = await keyWith({ allowed_ips: ['203.0.113.0/24', '127.0.0.0/8', '::1'] });
      await expectError(await chat(gwNext, key.key, chatBody(), { 'x-forwarded-for': '203.0.113.5' }), 403, 'ip_not_allowed');
      await expectError(await chat(gwNext, key.key), 403, 'ip_not_allowed');
      // A key without ranges is unaffected.
      const free = await keyWith({ rpm: 100 });
      const ok = await chat(gwNext, free.key.key);
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
    },
  );
});

describe('rate limits of a key across two instances', () => {
  it('rpm: the 3rd request is admitted, the 4th refused with 429 naming the key limit and Retry-After', async () => {
    const { key } = await keyWith({ rpm: 3 });
    for (let i = 0; i < 3; i++) {
      const res = await chat(i % 2 ? gwB : gwA, key.key);
      expect(res.status, `request ${i + 1}`).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBe('3');
      await res.arrayBuffer();
    }
    const res = await chat(gwB, key.key);
    const err = await expectError(res, 429, 'rate_limit_exceeded');
    expect(err.type).toBe('rate_limit');
    expect(err.message).toContain('API key "ci": 3 requests per minute');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('concurrency: of 6 overlapping requests on two instances exactly 2 are admitted', async () => {
    const { key } = await keyWith({ concurrency: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(i % 2 ? gwB : gwA, key.key, chatBody('deepseek-chat', 'slow'))));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);
    const refused = results.find((r) => r.status === 429)!;
    expect(((await refused.json()) as OpenAIError).error.message).toContain('API key "ci": 2 concurrent requests');
    await Promise.all(results.map((r) => r.arrayBuffer().catch(() => undefined)));
    // The slots are free again once the requests ended.
    const after = await chat(gwB, key.key);
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  });
});

describe('budgets', () => {
  const DEEPSEEK_IN = 270_000n; // pico-USD per token
  const DEEPSEEK_OUT = 1_100_000n;
  const MAX_TOKENS = 1000;
  /** The reservation of a deepseek-chat request: the prompt bound (body bytes / 2) and max_tokens. */
  function reservationOf(body: unknown): bigint {
    return BigInt(Math.ceil(JSON.stringify(body).length / 2)) * DEEPSEEK_IN + BigInt(MAX_TOKENS) * DEEPSEEK_OUT;
  }
  const usd = (p: bigint) => `${p / 10n ** 12n}.${(p % 10n ** 12n).toString().padStart(12, '0')}`;

  it('lifetime: overlapping requests on two instances reserve exactly up to the cap (402 key_budget_exceeded); settlements return the unused part', async () => {
    const body = chatBody('deepseek-chat', 'slow', { max_tokens: MAX_TOKENS });
    const r = reservationOf(body);
    // Room for 3.5 reservations: exactly 3 of 8 overlapping requests fit.
    const { cookie, key } = await keyWith({ budget_usd: usd((r * 7n) / 2n) });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(i % 2 ? gwB : gwA, key.key, body)));
    const statuses = results.map((x) => x.status);
    expect(
      statuses.filter((s) => s === 200),
      String(statuses),
    ).toHaveLength(3);
    const refusal = results.find((x) => x.status === 402)!;
    const err = ((await refusal.json()) as OpenAIError).error;
    expect(err.code).toBe('key_budget_exceeded');
    expect(err.message).toContain('lifetime budget');
    expect(refusal.headers.get('x-should-retry')).toBe('false');
    let charged = 0n;
    for (const x of results) {
      if (x.status === 200) charged += pico(x.headers.get('x-service-cost-usd')!);
      if (!x.bodyUsed) await x.arrayBuffer();
    }
    expect(charged).toBeGreaterThan(0n);
    expect(charged).toBeLessThan(r);
    // Settled to their real cost: the room of 3 reservations is back (3.5 r - cost >= 3 r).
    const again = await Promise.all(Array.from({ length: 3 }, (_, i) => chat(i % 2 ? gwA : gwB, key.key, body)));
    expect(again.map((x) => x.status)).toEqual([200, 200, 200]);
    for (const x of again) {
      charged += pico(x.headers.get('x-service-cost-usd')!);
      await x.arrayBuffer();
    }
    // The key's spend, as the keys API shows it once the log rows are written, is what was charged.
    const listed = await waitFor(async () => {
      const list = (await (await api(cookie, 'GET', '/api/keys')).json()) as { data: KeyJson[] };
      const k = list.data.find((x) => x.id === key.id)!;
      return pico(k.spend.total_usd) === charged ? k : null;
    }, 10_000);
    expect(pico(listed.spend.month_usd)).toBe(charged);
    expect(pico(listed.spend.total_cny)).toBeGreaterThan(0n);
    // The same figures grouped by key in the usage API.
    const usage = (await (await api(cookie, 'GET', '/api/usage?group_by=key')).json()) as {
      by_key: { key_id: string; total_usd: string; month_usd: string }[];
    };
    expect(pico(usage.by_key.find((k) => k.key_id === key.id)!.total_usd)).toBe(charged);
    expect((await api(cookie, 'GET', '/api/usage?group_by=colour')).status).toBe(400);
  });

  it('monthly: a request that could exceed the month’s budget is refused with 402 naming the month; raising it takes effect at once', async () => {
    const body = chatBody('deepseek-chat', 'Hi', { max_tokens: MAX_TOKENS });
    const r = reservationOf(body);
    const { cookie, key } = await keyWith({ monthly_budget_usd: usd(r - 1n) });
    const res = await chat(gwA, key.key, body);
    const err = await expectError(res, 402, 'key_budget_exceeded');
    const month = new Date().toISOString().slice(0, 7);
    expect(err.message).toContain(`monthly budget`);
    expect(err.message).toContain(`${month}, calendar month UTC`);
    // With clamping off the refusal says what would fit.
    const fits = Number(/The largest "max_tokens" it can pay for now is (\d+); send that or less\./.exec(err.message)?.[1]);
    expect(fits).toBeGreaterThan(900);
    expect(fits).toBeLessThan(MAX_TOKENS);
    await patchKey(cookie, key.id, { monthly_budget_usd: usd(r) });
    const ok = await chat(gwB, key.key, body);
    expect(ok.status, await ok.clone().text()).toBe(200);
    await ok.arrayBuffer();
  });

  it('a $0.002 key budget gets a reply with its output cap lowered to what it pays for, said in a header and the log, instead of a 402', async () => {
    const { key } = await keyWith({ budget_usd: '0.002' });
    // gpt-4o-mini's largest reply (4096 tokens at $0.60/M) and its fallback's cost more than $0.002.
    const res = await chat(gwProxy, key.key, chatBody('gpt-4o-mini', 'Hi'));
    expect(res.status, await res.clone().text()).toBe(200);
    const clamped = Number(res.headers.get('x-service-max-tokens-clamped'));
    expect(clamped).toBeGreaterThanOrEqual(1000);
    expect(clamped).toBeLessThan(4096);
    await res.arrayBuffer();
    // OpenAI's model gets OpenAI's current field, at that cap.
    const sent = JSON.parse(up.requests.at(-1)!.body) as Record<string, unknown>;
    expect(sent.max_completion_tokens).toBe(clamped);
    expect(sent.max_tokens).toBeUndefined();
    const requestId = res.headers.get('x-request-id')!;
    const row = await waitFor(async () => (await getDb()).requestLog.findFirst({ where: { id: requestId } }), 10_000);
    expect(row.routeReason).toContain(`output capped at ${clamped} tokens (key budget left: $0.002)`);
    // A client's own smaller cap is kept as it is.
    const small = await chat(gwProxy, key.key, chatBody('gpt-4o-mini', 'Hi', { max_tokens: 50 }));
    expect(small.status).toBe(200);
    expect(small.headers.get('x-service-max-tokens-clamped')).toBeNull();
    await small.arrayBuffer();
  });

  it('the Anthropic and Responses surfaces lower their own fields', async () => {
    const { key } = await keyWith({ budget_usd: '0.002' });
    const messages = await fetch(`${gwProxy.url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(messages.status, await messages.clone().text()).toBe(200);
    const n = Number(messages.headers.get('x-service-max-tokens-clamped'));
    expect(n).toBeGreaterThan(0);
    await messages.arrayBuffer();
    expect((JSON.parse(up.requests.at(-1)!.body) as Record<string, unknown>).max_completion_tokens).toBe(n);
    const responses = await fetch(`${gwProxy.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'Hi', store: false }),
    });
    expect(responses.status, await responses.clone().text()).toBe(200);
    expect(Number(responses.headers.get('x-service-max-tokens-clamped'))).toBeGreaterThan(0);
    await responses.arrayBuffer();
  });

  it('a stream on a key whose budget is spent is refused without calling the upstream (no speculative dispatch)', async () => {
    const { account, key } = await keyWith({ budget_usd: '0.000001' });
    // The account's other key (no controls) leaves a room reading that would let its streams speculate.
    const warm = await chat(gwA, account.apiKey, chatBody('deepseek-chat', 'Hi', { stream: true }));
    expect(warm.status).toBe(200);
    await warm.arrayBuffer();
    const before = up.received();
    await expectError(await chat(gwA, key.key, chatBody('deepseek-chat', 'Hi', { stream: true })), 402, 'key_budget_exceeded');
    expect(up.received()).toBe(before);
  });

  it('on the Anthropic mirror the refusal is a billing_error', async () => {
    const { key } = await keyWith({ budget_usd: '0.000001' });
    const res = await anthropic(gwA, key.key, 'claude-haiku-4-5');
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: 'billing_error' });
  });
});

describe('edits hold on the next request on every instance', () => {
  it('through the PATCH API', async () => {
    const { cookie, key } = await keyWith({});
    for (const gw of [gwA, gwB]) {
      const res = await chat(gw, key.key, chatBody('gpt-4o-mini'));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    await patchKey(cookie, key.id, { models: ['deepseek-chat'] });
    for (const gw of [gwB, gwA]) await expectError(await chat(gw, key.key, chatBody('gpt-4o-mini')), 403, 'model_not_allowed');
    await patchKey(cookie, key.id, { models: null });
    for (const gw of [gwB, gwA]) {
      const res = await chatAfterEdit(gw, key.key, chatBody('gpt-4o-mini'));
      expect(res.status, await res.clone().text()).toBe(200);
      await res.arrayBuffer();
    }
  });

  it('with the pub/sub message lost: the version marker alone makes both instances reload the key', async () => {
    const { key } = await keyWith({});
    for (const gw of [gwA, gwB]) {
      const res = await chat(gw, key.key, chatBody('gpt-4o-mini'));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const db = await getDb();
    const hash = hashApiKey(key.key);
    // An edit whose message never arrived: the row and the marker of the old version only.
    const tighten = await db.apiKey.update({ where: { id: key.id }, data: { models: ['deepseek-chat'], controlsVersion: { increment: 1 } } });
    await redis.set(keyStaleKey(hash, tighten.controlsVersion - 1), '1', 'PX', 60_000);
    for (const gw of [gwB, gwA]) await expectError(await chat(gw, key.key, chatBody('gpt-4o-mini')), 403, 'model_not_allowed');
    // Loosened the same way: a cached copy that would refuse asks for a retry, and the retry is served.
    const loosen = await db.apiKey.update({ where: { id: key.id }, data: { models: [], controlsVersion: { increment: 1 } } });
    await redis.set(keyStaleKey(hash, loosen.controlsVersion - 1), '1', 'PX', 60_000);
    for (const gw of [gwB, gwA]) {
      const res = await chatAfterEdit(gw, key.key, chatBody('gpt-4o-mini'));
      expect(res.status, await res.clone().text()).toBe(200);
      await res.arrayBuffer();
    }
  });
});
