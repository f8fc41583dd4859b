// Issue 44 items 6 and 7 against the built server: the response cache (opt-in per request or per
// key, exact-match, per account, streamed and whole, replayed in the client's protocol, billed at
// the operator's fraction, logged as a hit, bypassed by Cache-Control: no-store, bounded in size)
// and cache-aware routing (a conversation stays on the channel that served it while it is healthy,
// across instances sharing Redis).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let gw2: RunningGateway;
let fakeA: FakeUpstream;
let fakeB: FakeUpstream;
let antA: FakeUpstream;
let antB: FakeUpstream;
const PREFIX = `cch${randomBytes(3).toString('hex')}-`;
const MAX_ENTRY = 6000;

beforeAll(async () => {
  [fakeA, fakeB, antA, antB] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
  const config = testConfig({
    openaiUrls: [fakeA.url, fakeB.url],
    anthropicUrls: [antA.url, antB.url],
    channelPrefix: PREFIX,
    overrides: { response_cache: { billed_fraction: '0.5', max_entry_bytes: MAX_ENTRY } },
  });
  // Channels of one protocol share a priority: only affinity (or chance) keeps a conversation on one.
  for (const c of config.channels as { priority: number }[]) c.priority = 5;
  [gw, gw2] = await Promise.all([startGateway({ config }), startGateway({ config })]);
}, 180_000);

afterAll(async () => {
  await Promise.all([gw?.stop('SIGKILL'), gw2?.stop('SIGKILL')]);
  await Promise.all([fakeA, fakeB, antA, antB].map((f) => f?.close()));
});

beforeEach(() => {
  for (const f of [fakeA, fakeB, antA, antB]) f.reset();
});

const upstreamCalls = () => fakeA.requests.length + fakeB.requests.length;

function chat(a: TestAccount, body: Record<string, unknown>, headers: Record<string, string> = {}, on = gw) {
  return fetch(`${on.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', ...body }),
  });
}

function messages(a: TestAccount, body: Record<string, unknown>, headers: Record<string, string> = {}, on = gw) {
  return fetch(`${on.url}/v1/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': a.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, ...body }),
  });
}

async function logRow(id: string) {
  const db = await getDb();
  return waitFor(() => db.requestLog.findFirst({ where: { id } }), 10_000);
}

const unique = () => `question ${randomBytes(6).toString('hex')}`;

describe('response cache', () => {
  it('a repeated request with x-service-cache is answered from the cache: same content, no upstream call, billed at the fraction, logged as a hit', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const body = { messages: [{ role: 'user', content: unique() }], temperature: 0 };
    const miss = await chat(a, body, { 'x-service-cache': 'ttl=60' });
    expect(miss.status).toBe(200);
    expect(miss.headers.get('x-service-cache')).toBe('miss');
    const first = (await miss.json()) as { choices: { message: { content: string } }[] };
    const missCost = miss.headers.get('x-service-cost-usd')!;
    expect(Number(missCost)).toBeGreaterThan(0);
    expect(upstreamCalls()).toBe(1);

    // Same request, keys in another order: the normalized request matches.
    const hit = await chat(a, { temperature: 0, messages: body.messages }, { 'x-service-cache': 'ttl=60' });
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-service-cache')).toBe('hit');
    const second = (await hit.json()) as { choices: { message: { content: string } }[] };
    expect(second.choices[0].message.content).toBe(first.choices[0].message.content);
    expect(hit.headers.get('x-request-id')).not.toBe(miss.headers.get('x-request-id'));
    expect(upstreamCalls()).toBe(1);
    // billed_fraction 0.5: exactly half the miss's price.
    const hitCost = hit.headers.get('x-service-cost-usd')!;
    expect(Number(hitCost) * 2).toBeCloseTo(Number(missCost), 12);
    const row = await logRow(hit.headers.get('x-request-id')!);
    expect(row.routeReason).toMatch(/response cache hit/);
    expect(row.channel).toBeNull();
    expect(row.costUsd.toFixed(12)).toBe(Number(hitCost).toFixed(12));
    // The balance paid the miss and half of it for the hit (both charges written behind).
    const charged = () => balanceOf(a.userId).then((b) => 5 - Number(b));
    await waitFor(async () => Math.abs((await charged()) - Number(missCost) - Number(hitCost)) < 1e-12, 10_000);

    // A different sampling parameter is another request.
    const other = await chat(a, { ...body, temperature: 1 }, { 'x-service-cache': 'ttl=60' });
    expect(other.headers.get('x-service-cache')).toBe('miss');
    expect(upstreamCalls()).toBe(2);
  });

  it('a streamed reply is cached and replayed as a stream in the client protocol', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const body = { messages: [{ role: 'user', content: unique() }], stream: true };
    const miss = await chat(a, body, { 'x-service-cache': 'ttl=60' });
    const missText = await miss.text();
    expect(miss.headers.get('x-service-cache')).toBe('miss');
    const hit = await chat(a, body, { 'x-service-cache': 'ttl=60' });
    expect(hit.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(hit.headers.get('x-service-cache')).toBe('hit');
    const hitText = await hit.text();
    const content = (t: string) =>
      t
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => (JSON.parse(l.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '')
        .join('');
    expect(content(hitText)).toBe(content(missText));
    expect(content(hitText).length).toBeGreaterThan(0);
    expect(hitText.trim().endsWith('data: [DONE]')).toBe(true);
    expect(upstreamCalls()).toBe(1);

    // The Anthropic mirror: a hit streams Anthropic events.
    const mbody = { messages: [{ role: 'user', content: unique() }], stream: true };
    await (await messages(a, mbody, { 'x-service-cache': 'ttl=60' })).text();
    const mhit = await messages(a, mbody, { 'x-service-cache': 'ttl=60' });
    expect(mhit.headers.get('x-service-cache')).toBe('hit');
    const mtext = await mhit.text();
    expect(mtext).toContain('event: message_start');
    expect(mtext).toContain('event: message_stop');
    expect(antA.requests.length + antB.requests.length).toBe(1);
  });

  it('is never shared across accounts, is bypassed by Cache-Control: no-store, and refuses a malformed header', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const b = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const body = { messages: [{ role: 'user', content: unique() }] };
    await (await chat(a, body, { 'x-service-cache': 'ttl=60' })).text();
    const other = await chat(b, body, { 'x-service-cache': 'ttl=60' });
    expect(other.headers.get('x-service-cache')).toBe('miss');
    expect(upstreamCalls()).toBe(2);

    const bypass = await chat(a, body, { 'x-service-cache': 'ttl=60', 'cache-control': 'no-store' });
    expect(bypass.status).toBe(200);
    expect(bypass.headers.get('x-service-cache')).toBeNull();
    expect(upstreamCalls()).toBe(3);

    const bad = await chat(a, body, { 'x-service-cache': 'ttl=soon' });
    expect(bad.status).toBe(400);
    const err = ((await bad.json()) as { error: { param: string; message: string } }).error;
    expect(err.param).toBe('x-service-cache');
    expect(err.message).toMatch(/ttl=<seconds>/);
  });

  it('does not store a reply over the size cap', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    fakeA.setReply('x'.repeat(MAX_ENTRY));
    fakeB.setReply('x'.repeat(MAX_ENTRY));
    const body = { messages: [{ role: 'user', content: unique() }] };
    expect((await chat(a, body, { 'x-service-cache': 'ttl=60' })).headers.get('x-service-cache')).toBe('miss');
    expect((await chat(a, body, { 'x-service-cache': 'ttl=60' })).headers.get('x-service-cache')).toBe('miss');
    expect(upstreamCalls()).toBe(2);
  });

  it('a key opted in (PATCH /api/keys/:id) caches its requests without the header', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const cookie = await signIn(a);
    const patch = (body: unknown) =>
      fetch(`${gw.url}/api/keys/${a.keyId}`, {
        method: 'PATCH',
        headers: { cookie, origin: gw.url, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await patch({ response_cache_ttl_seconds: 0 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string; message_code: string } }).error).toMatchObject({
      param: 'response_cache_ttl_seconds',
      message_code: 'key.response_cache_ttl',
    });
    const ok = await patch({ response_cache_ttl_seconds: 120 });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { response_cache_ttl_seconds: number }).response_cache_ttl_seconds).toBe(120);
    const body = { messages: [{ role: 'user', content: unique() }] };
    expect((await chat(a, body)).headers.get('x-service-cache')).toBe('miss');
    expect((await chat(a, body)).headers.get('x-service-cache')).toBe('hit');
    expect(upstreamCalls()).toBe(1);
  });
});

describe('cache-aware routing', () => {
  it('a conversation stays on the channel that served it (on every instance), and moves when that channel fails', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const session = randomBytes(8).toString('hex');
    const served: string[] = [];
    for (let turn = 0; turn < 6; turn++) {
      const res = await chat(a, { messages: [{ role: 'user', content: `turn ${turn}` }] }, { 'x-session-affinity': session }, turn % 2 ? gw2 : gw);
      expect(res.status).toBe(200);
      served.push(res.headers.get('x-service-provider')!);
    }
    // Equal priority and weight: without affinity six requests would land on one channel 1 time in 32.
    expect(new Set(served).size).toBe(1);
    const home = served[0];
    const [homeFake, otherFake] = home === `${PREFIX}openai-1` ? [fakeA, fakeB] : [fakeB, fakeA];
    expect(otherFake.requests.length).toBe(0);

    // The channel fails: the conversation falls over and is then kept where it landed.
    homeFake.queue({ type: 'status', status: 500 });
    const moved = await chat(a, { messages: [{ role: 'user', content: 'turn 6' }] }, { 'x-session-affinity': session });
    expect(moved.status).toBe(200);
    const newHome = moved.headers.get('x-service-provider');
    expect(newHome).not.toBe(home);
    const again = await chat(a, { messages: [{ role: 'user', content: 'turn 7' }] }, { 'x-session-affinity': session }, gw2);
    expect(again.headers.get('x-service-provider')).toBe(newHome);
  });

  it('an Anthropic conversation (metadata.user_id) reads its warm prompt cache on every turn; the log shows the saving', async () => {
    const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const system = [{ type: 'text', text: `You are helpful ${unique()}`, cache_control: { type: 'ephemeral' } }];
    const metadata = { user_id: `user_${randomBytes(6).toString('hex')}` };
    const ids: string[] = [];
    const providers: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const res = await messages(a, { system, metadata, messages: [{ role: 'user', content: `turn ${turn}` }] }, {}, turn % 2 ? gw2 : gw);
      expect(res.status).toBe(200);
      ids.push(res.headers.get('x-request-id')!);
      providers.push(res.headers.get('x-service-provider')!);
    }
    expect(new Set(providers).size).toBe(1);
    // Only the first turn wrote the upstream's cache; every later turn read it.
    const rows = await Promise.all(ids.map(logRow));
    expect(rows[0].cacheWriteTokens).toBeGreaterThan(0);
    for (const r of rows.slice(1)) expect(r.cacheReadTokens).toBeGreaterThan(0);

    // The saving per request: cache reads priced at the input price minus what they cost.
    const cookie = await signIn(a);
    const detail = await fetch(`${gw.url}/api/logs/${ids[1]}`, { headers: { cookie } });
    expect(detail.status).toBe(200);
    const entry = (await detail.json()) as { cache_saving_usd: string };
    // claude-sonnet-4-5: input $3/M, cache read $0.30/M: 100 tokens save $0.00027.
    expect(entry.cache_saving_usd).toBe('0.00027');
  });
});

async function signIn(a: TestAccount): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}
