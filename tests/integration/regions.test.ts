// Regions (issue 43 item 4) against the built server: channels declare a region; a request's
// `service.region` or `x-service-region` header (or its key's or account's pin) keeps routing,
// fallback included, inside that region. When no channel there can serve, the answer is a 503 in
// the surface's own envelope naming the region, and nothing is sent out of region.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let eu: FakeUpstream;
let us: FakeUpstream;
let claudeEu: FakeUpstream;
let account: TestAccount;

beforeAll(async () => {
  [eu, us, claudeEu] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
  const config = testConfig({ openaiUrls: [eu.url, us.url], anthropicUrls: [claudeEu.url], channelPrefix: 'rgn-' }) as {
    channels: { name: string; region?: string }[];
  };
  // openai-1 (eu) is the preferred channel; openai-2 (us) the fallback; the Claude channel is in eu.
  config.channels[0]!.region = 'eu';
  config.channels[1]!.region = 'us';
  config.channels[2]!.region = 'eu';
  gw = await startGateway({ config });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([eu?.close(), us?.close(), claudeEu?.close()]);
  await (await getDb()).$disconnect();
});

beforeEach(() => {
  for (const f of [eu, us, claudeEu]) f.reset();
});

const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}, key = account.apiKey) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], ...body }),
  });

async function logRow(id: string) {
  const db = await getDb();
  return waitFor(() => db.requestLog.findFirst({ where: { id } }), 10_000);
}

describe('regions', { timeout: 60_000 }, () => {
  it('service.region routes to that region only, says so in X-Service-Region and the log, and never sends the body field upstream', async () => {
    const res = await chat({ service: { region: 'us' } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-region')).toBe('us');
    expect(res.headers.get('x-service-provider')).toBe('rgn-openai-2');
    await res.arrayBuffer();
    expect(eu.requests).toHaveLength(0);
    expect(us.requests).toHaveLength(1);
    expect(JSON.parse(us.requests[0]!.body)).not.toHaveProperty('service');
    expect((await logRow(res.headers.get('x-request-id')!)).region).toBe('us');
  });

  it('without a region the preferred channel serves, and its region is named', async () => {
    const res = await chat({});
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-region')).toBe('eu');
    await res.arrayBuffer();
  });

  it('a failing in-region channel is a 503 naming the region, with nothing sent out of region (OpenAI envelope)', async () => {
    eu.setDefault({ type: 'status', status: 500 });
    const res = await chat({}, { 'x-service-region': 'eu' });
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    expect(res.status).toBe(503);
    expect(body.error.code).toBe('region_unavailable');
    expect(body.error.message).toContain('"eu"');
    expect(eu.requests.length).toBeGreaterThan(0);
    expect(us.requests).toHaveLength(0);
    // Without the region the same request falls back to us, as before.
    const anywhere = await chat({});
    expect(anywhere.status).toBe(200);
    expect(anywhere.headers.get('x-service-region')).toBe('us');
    await anywhere.arrayBuffer();
  });

  it('a region no channel of the model is in: 503 before anything is admitted or sent, in the Anthropic envelope on its surface', async () => {
    const res = await fetch(`${gw.url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-service-region': 'us' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(res.status).toBe(503);
    expect(body.type).toBe('error');
    expect(body.error.message).toContain('"us"');
    for (const f of [eu, us, claudeEu]) expect(f.requests).toHaveLength(0);
  });

  it('the Gemini surface answers in Google’s envelope', async () => {
    eu.setDefault({ type: 'status', status: 500 });
    const res = await fetch(`${gw.url}/v1/gemini/v1beta/models/gpt-4o-mini:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': account.apiKey, 'content-type': 'application/json', 'x-service-region': 'eu' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    const body = (await res.json()) as { error: { code: number; status: string; message: string } };
    expect(res.status).toBe(503);
    expect(body.error.code).toBe(503);
    expect(body.error.message).toContain('"eu"');
    expect(us.requests).toHaveLength(0);
  });

  it('embeddings take service.region too', async () => {
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hello', service: { region: 'us' } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-region')).toBe('us');
    await res.arrayBuffer();
    expect(eu.requests).toHaveLength(0);
    expect(JSON.parse(us.requests[0]!.body)).not.toHaveProperty('service');
  });

  it('GET /v1/models filters by region; a malformed region is a 400 naming it', async () => {
    const list = async (q: string) => {
      const res = await fetch(`${gw.url}/v1/models${q}`, { headers: { authorization: `Bearer ${account.apiKey}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    };
    const all = await list('');
    const inUs = await list('?region=us');
    const inEu = await list('?region=eu');
    expect(all).toContain('claude-sonnet-4-5');
    expect(inEu).toContain('claude-sonnet-4-5');
    expect(inUs).not.toContain('claude-sonnet-4-5');
    expect(inUs).toContain('gpt-4o-mini');
    expect(await list('?region=mars')).toEqual([]);
    const bad = await fetch(`${gw.url}/v1/models?region=${encodeURIComponent('EU!')}`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(bad.status).toBe(400);
    const bad2 = await chat({ service: { region: 'Not A Region' } });
    expect(bad2.status).toBe(400);
    expect(((await bad2.json()) as { error: { param: string } }).error.param).toBe('service.region');
  });

  it('a key pinned to a region is served there, and refuses another region with a 403 naming both', async () => {
    const pinned = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: pinned.email, password: pinned.password }),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const patch = await fetch(`${gw.url}/api/keys/${pinned.keyId}`, {
      method: 'PATCH',
      headers: { cookie, 'content-type': 'application/json', origin: gw.url },
      body: JSON.stringify({ region: 'us' }),
    });
    expect(patch.status, await patch.clone().text()).toBe(200);
    expect(((await patch.json()) as { region: string }).region).toBe('us');
    // The edit reaches every instance's key cache through the gateway's events: wait until it is seen.
    await waitFor(async () => {
      const r = await chat({}, { 'x-service-region': 'eu' }, pinned.apiKey);
      await r.arrayBuffer();
      return r.status === 403;
    }, 10_000);
    for (const f of [eu, us, claudeEu]) f.reset();
    const served = await chat({}, {}, pinned.apiKey);
    expect(served.status).toBe(200);
    expect(served.headers.get('x-service-region')).toBe('us');
    await served.arrayBuffer();
    expect(eu.requests).toHaveLength(0);
    const refused = await chat({}, { 'x-service-region': 'eu' }, pinned.apiKey);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(refused.status).toBe(403);
    expect(body.error.code).toBe('region_not_allowed');
    expect(body.error.message).toMatch(/"us".*"eu"/);
  });

  it('an account pinned to a region keeps every key of it there', async () => {
    const pinned = await createAccount({ tier: 'pro', balanceUsd: '5' });
    await (await getDb()).user.update({ where: { id: pinned.userId }, data: { region: 'us' } });
    const res = await chat({}, {}, pinned.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-region')).toBe('us');
    await res.arrayBuffer();
    expect(eu.requests).toHaveLength(0);
  });
});
