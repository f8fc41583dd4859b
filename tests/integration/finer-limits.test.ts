// Issue 45 item 4 against the built server: tokens per minute per key (set through the keys API),
// per model and per channel, reserved at admission and settled after the reply; a channel at its
// concurrency cap makes traffic fall back to the other channel, and both at their caps is a 429
// naming the limit, with Retry-After, in the surface's envelope.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';

let gw: RunningGateway;
let one: FakeUpstream;
let two: FakeUpstream;
const MODEL_TPM = 3_000;
const CHANNEL_TPM = 2_000;

/** Requests whose text says "hold" are answered after a pause: they keep their place meanwhile. */
const holding = (req: RecordedRequest) => (req.body.includes('hold') ? { type: 'delay' as const, ms: 1_500 } : undefined);

function chat(apiKey: string, body: Record<string, unknown>) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', ...body }),
  });
}

function messages(text: string) {
  return [{ role: 'user', content: text }];
}

async function rateLimited(res: Response) {
  const text = await res.text();
  expect(res.status, text).toBe(429);
  const error = (JSON.parse(text) as { error: { type: string; code: string; message: string } }).error;
  expect(error.type).toBe('rate_limit');
  expect(error.code).toBe('rate_limit_exceeded');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  return error;
}

async function signedIn(): Promise<TestAccount & { cookie: string }> {
  const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status).toBe(200);
  return { ...a, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] };
}

// The same cases on Redis (shared by instances) and on the in-process limiter (no REDIS_URL).
describe.each([
  ['redis', {}],
  ['in-process', { REDIS_URL: '' }],
] as [string, Record<string, string>][])('%s limiter', (_name, env) => {
  beforeAll(async () => {
    [one, two] = await Promise.all([startFakeUpstream({ faultFor: holding }), startFakeUpstream({ faultFor: holding })]);
    const config = testConfig({ openaiUrls: [one.url, two.url], overrides: { limits: { login_per_ip_per_minute: 10_000 } } });
    const channels = config.channels as { name: string; concurrency?: number; label?: string }[];
    channels[0].concurrency = 1;
    channels[0].label = 'Acme One';
    channels[1].concurrency = 1;
    channels[1].label = 'Acme Two';
    (config.models as { name: string; tpm?: number }[]).find((m) => m.name === 'gpt-4o')!.tpm = MODEL_TPM;
    // deepseek-chat on channels of its own: the first with tokens per minute of its own, the second without.
    const all = config.channels as { name: string; models: string[]; priority: number; tpm?: number; concurrency?: number; label?: string }[];
    for (const c of all) c.models = c.models.filter((m) => m !== 'deepseek-chat');
    all.push({ ...all[0], name: 'tpm-a', models: ['deepseek-chat'], tpm: CHANNEL_TPM, concurrency: undefined, label: 'Acme Tokens' });
    all.push({ ...all[1], name: 'tpm-b', models: ['deepseek-chat'], concurrency: undefined });
    gw = await startGateway({ config, env });
  }, 120_000);

  afterAll(async () => {
    await gw?.stop('SIGKILL');
    await Promise.all([one?.close(), two?.close()]);
  });

  beforeEach(() => {
    one.reset();
    two.reset();
  });

  describe('tokens per minute', () => {
    it("a key's tpm (set by the keys API) refuses the request that would cross it: 429 naming it, with Retry-After; the reply's settlement frees the unused part", async () => {
      const a = await signedIn();
      const patched = await fetch(`${gw.url}/api/keys/${a.keyId}`, {
        method: 'PATCH',
        headers: { cookie: a.cookie, origin: gw.url, 'content-type': 'application/json' },
        body: JSON.stringify({ tpm: 1_000 }),
      });
      expect(patched.status, await patched.clone().text()).toBe(200);
      expect(((await patched.json()) as { tpm: number }).tpm).toBe(1_000);
      const bad = await fetch(`${gw.url}/api/keys/${a.keyId}`, {
        method: 'PATCH',
        headers: { cookie: a.cookie, origin: gw.url, 'content-type': 'application/json' },
        body: JSON.stringify({ tpm: 0 }),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('tpm');

      // Each reserves its prompt's bound and max_tokens (~600 of 1,000): the first, held in flight, leaves no room for a second.
      const held = chat(a.apiKey, { messages: messages('hold'), max_tokens: 550 });
      await new Promise((r) => setTimeout(r, 300));
      const refused = await chat(a.apiKey, { messages: messages('hi'), max_tokens: 550 });
      const error = await rateLimited(refused);
      expect(error.message).toContain('1000 tokens per minute');
      expect(error.message).toContain('API key');
      expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(62);
      expect((await held).status).toBe(200);
      // Settled to what it used (a few dozen tokens; the release follows the reply at once): the same request fits now.
      await new Promise((r) => setTimeout(r, 500));
      const after = await chat(a.apiKey, { messages: messages('hi'), max_tokens: 550 });
      expect(after.status, await after.clone().text()).toBe(200);
      expect(Number(after.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(1_000 - 550);
    });

    it("a model's tpm is shared across accounts; a request larger than the limit is told so and not to retry", async () => {
      const [a, b] = await Promise.all([createAccount({ tier: 'pro', balanceUsd: '5' }), createAccount({ tier: 'pro', balanceUsd: '5' })]);
      const held = chat(a.apiKey, { model: 'gpt-4o', messages: messages('hold'), max_tokens: 2_000 });
      await new Promise((r) => setTimeout(r, 300));
      const error = await rateLimited(await chat(b.apiKey, { model: 'gpt-4o', messages: messages('hi'), max_tokens: 1_500 }));
      expect(error.message).toContain(`model gpt-4o: ${MODEL_TPM} tokens per minute`);
      expect((await held).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500)); // its settlement follows the reply
      expect((await chat(b.apiKey, { model: 'gpt-4o', messages: messages('hi'), max_tokens: 1_500 })).status).toBe(200);

      const huge = await chat(b.apiKey, { model: 'gpt-4o', messages: messages('hi'), max_tokens: MODEL_TPM + 1 });
      expect(huge.headers.get('x-should-retry')).toBe('false');
      expect((await rateLimited(huge)).message).toContain('lower max_tokens');
    });

    it('the Anthropic surface answers the same refusal in its own envelope', async () => {
      const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
      const res = await fetch(`${gw.url}/v1/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: MODEL_TPM + 1, messages: messages('hi') }),
      });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('rate_limit_error');
      expect(body.error.message).toContain(`${MODEL_TPM} tokens per minute`);
    });
  });

  describe('channel concurrency', () => {
    it('a channel at its cap makes traffic fall back to the next channel; both at their caps is a 429 naming the limit', async () => {
      const accounts = await Promise.all([0, 1, 2].map(() => createAccount({ tier: 'pro', balanceUsd: '5' })));
      // The first holds the first channel's one place.
      const first = chat(accounts[0].apiKey, { model: 'gpt-4o', messages: messages('hold'), max_tokens: 20 });
      await new Promise((r) => setTimeout(r, 300));
      expect(one.requests.length).toBe(1);
      // The second falls back to the other channel (and holds its place too).
      const second = chat(accounts[1].apiKey, { model: 'gpt-4o', messages: messages('hold'), max_tokens: 20 });
      await new Promise((r) => setTimeout(r, 300));
      expect(two.requests.length).toBe(1);
      expect(one.requests.length).toBe(1);
      // Both at their caps: refused before any upstream call, naming a channel's cap (by its public label).
      const error = await rateLimited(await chat(accounts[2].apiKey, { model: 'gpt-4o', messages: messages('hi'), max_tokens: 20 }));
      expect(error.message).toMatch(/upstream channel "Acme (One|Two)": 1 concurrent requests/);
      expect(error.message).not.toContain('openai-1');
      expect(one.requests.length + two.requests.length).toBe(2);
      // A model with a fallback model is served by it instead (deepseek-chat, on channels with room).
      const fellBack = await chat(accounts[2].apiKey, { model: 'gpt-4o-mini', messages: messages('hi'), max_tokens: 20 });
      expect(fellBack.status).toBe(200);
      expect(fellBack.headers.get('x-service-model-id')).toBe('deepseek-chat');
      expect(one.requests.at(-1)!.body).toContain('deepseek-chat');
      const [r1, r2] = await Promise.all([first, second]);
      expect(r1.status).toBe(200);
      expect(r2.status).toBe(200);
      // Places are freed with the replies (their releases follow the reply at once): the first channel serves again.
      await new Promise((r) => setTimeout(r, 500));
      const again = await chat(accounts[2].apiKey, { model: 'gpt-4o', messages: messages('hi'), max_tokens: 20 });
      expect(again.status).toBe(200);
      expect(one.requests.length).toBe(3);
    });

    it("a channel's tokens per minute: the request that would cross it falls back to the next channel; the settlement frees the room", async () => {
      const [a, b] = await Promise.all([createAccount({ tier: 'pro', balanceUsd: '5' }), createAccount({ tier: 'pro', balanceUsd: '5' })]);
      const held = chat(a.apiKey, { model: 'deepseek-chat', messages: messages('hold'), max_tokens: 1_500 });
      await new Promise((r) => setTimeout(r, 300));
      expect(one.requests.length).toBe(1);
      const fallback = await chat(b.apiKey, { model: 'deepseek-chat', messages: messages('hi'), max_tokens: 1_500 });
      expect(fallback.status).toBe(200);
      expect(two.requests.length).toBe(1);
      expect(one.requests.length).toBe(1);
      expect((await held).status).toBe(200);
      // Settled to the few tokens it used (the release follows the reply at once): the first channel takes the next one.
      await new Promise((r) => setTimeout(r, 500));
      expect((await chat(b.apiKey, { model: 'deepseek-chat', messages: messages('hi'), max_tokens: 1_500 })).status).toBe(200);
      expect(one.requests.length).toBe(2);
    });

    it('a stream keeps its place until it ends, then frees it', async () => {
      const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
      const streamed = chat(a.apiKey, { messages: messages('hold'), max_tokens: 20, stream: true });
      await new Promise((r) => setTimeout(r, 300));
      const other = await chat(a.apiKey, { messages: messages('hi'), max_tokens: 20 });
      expect(other.status).toBe(200);
      expect(two.requests.length).toBe(1);
      const s = await streamed;
      expect(s.status).toBe(200);
      expect(await s.text()).toContain('[DONE]');
      const after = await chat(a.apiKey, { messages: messages('hi'), max_tokens: 20 });
      expect(after.status).toBe(200);
      expect(one.requests.length).toBe(2);
    });
  });
});
