// Regions (issue 43 item 4) against the built server: channels declare a region; a request's
// `service.region` or `x-service-region` header (or its key's or account's pin) keeps routing,
// fallback included, inside that region. When no channel there can serve, the answer is a 503 in
// the surface's own envelope naming the region, and nothing is sent out of region.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { FAST_JOBS_ENV, VIDEO_MODEL, withVideoModels } from '../support/video-config';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let eu: FakeUpstream;
let us: FakeUpstream;
let claudeEu: FakeUpstream;
let account: TestAccount;
let dataDir: string;

beforeAll(async () => {
  [eu, us, claudeEu] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
  // Logins of every test file running at once count against one per-IP counter in the shared Redis:
  // this file's own sign-in must not meet the default 10 per minute that others used up.
  const overrides = { limits: { login_per_ip_per_minute: 10_000 } };
  const config = withVideoModels(testConfig({ openaiUrls: [eu.url, us.url], anthropicUrls: [claudeEu.url], channelPrefix: 'rgn-', overrides })) as {
    channels: { name: string; region?: string }[];
  };
  // openai-1 (eu) is the preferred channel; openai-2 (us) the fallback; the Claude channel is in eu.
  config.channels[0]!.region = 'eu';
  config.channels[1]!.region = 'us';
  config.channels[2]!.region = 'eu';
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-regions-'));
  gw = await startGateway({ config, env: { ...FAST_JOBS_ENV, DATA_DIR: dataDir } });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
  // One request first: a cold gateway on a loaded machine can pass a channel's first-byte timeout
  // and try again, which would count twice in the first test's upstream (the fakes are reset before each test).
  const warm = await chat({});
  await warm.arrayBuffer();
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([eu?.close(), us?.close(), claudeEu?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
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
    expect(login.status, await login.clone().text()).toBe(200);
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
  it('the Gemini model list filters by ?region= and the header, as /v1/models does', async () => {
    const list = async (q: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${gw.url}/v1/gemini/v1beta/models${q}`, { headers: { 'x-goog-api-key': account.apiKey, ...headers } });
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { models: { name: string }[] }).models.map((m) => m.name);
    };
    expect(await list('')).toContain('models/claude-sonnet-4-5');
    expect(await list('?region=eu')).toContain('models/claude-sonnet-4-5');
    const inUs = await list('?region=us');
    expect(inUs).toContain('models/gpt-4o-mini');
    expect(inUs).not.toContain('models/claude-sonnet-4-5');
    expect(await list('', { 'x-service-region': 'us' })).toEqual(inUs);
    expect(await list('?region=mars')).toEqual([]);
    const bad = await fetch(`${gw.url}/v1/gemini/v1beta/models?region=${encodeURIComponent('EU!')}`, { headers: { 'x-goog-api-key': account.apiKey } });
    const body = (await bad.json()) as { error: { code: number; status: string } };
    expect(bad.status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });

  it('a video takes a region: generated by that region’s channel only, logged with it; a region without a video channel is a 503 with nothing reserved', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const auth = { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' };
    const res = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: { ...auth, 'x-service-region': 'us' },
      body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[ms=600] a harbour in the us region', seconds: 2 }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const done = await waitFor(async () => {
      const v = (await (await fetch(`${gw.url}/v1/videos/${id}`, { headers: auth })).json()) as { status: string };
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 30_000);
    expect(done.status).toBe('completed');
    // eu is the preferred channel: without the region it would have made the video.
    expect(us.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos')).toHaveLength(1);
    expect(eu.requests).toHaveLength(0);
    expect((await logRow(id)).region).toBe('us');

    const nowhere = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: VIDEO_MODEL, prompt: 'a harbour on mars', seconds: 2, service: { region: 'mars' } }),
    });
    const body = (await nowhere.json()) as { error: { code: string; message: string } };
    expect(nowhere.status).toBe(503);
    expect(body.error.code).toBe('region_unavailable');
    expect(body.error.message).toContain('"mars"');
    expect(await balanceOf(acct.userId)).toBe('4.800000000000');
    expect(eu.requests.length + us.requests.filter((r) => r.body.includes('mars')).length).toBe(0);
  });

  async function submitBatch(acct: TestAccount, lines: { model: string; content: string }[], headers: Record<string, string>) {
    const form = new FormData();
    form.append('purpose', 'batch');
    const jsonl = lines.map((l, i) =>
      JSON.stringify({
        custom_id: `r-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: l.model, messages: [{ role: 'user', content: l.content }] },
      }),
    );
    form.append('file', new Blob([jsonl.join('\n')]), 'regions.jsonl');
    const auth = { authorization: `Bearer ${acct.apiKey}` };
    const file = (await (await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
    return fetch(`${gw.url}/v1/batches`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
  }

  async function finished(acct: TestAccount, id: string) {
    return waitFor(async () => {
      const b = (await (await fetch(`${gw.url}/v1/batches/${id}`, { headers: { authorization: `Bearer ${acct.apiKey}` } })).json()) as {
        status: string;
        output_file_id: string | null;
        error_file_id: string | null;
        request_counts: { total: number; completed: number; failed: number };
      };
      return b.status === 'completed' ? b : null;
    }, 40_000);
  }

  it('a batch keeps the region it was created with: every line goes to that region only, a failing one is a 503 in the error file', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const created = await submitBatch(
      acct,
      [0, 1, 2].map((i) => ({ model: 'gpt-4o-mini', content: `regional line ${i}` })),
      { 'x-service-region': 'us' },
    );
    expect(created.status, await created.clone().text()).toBe(200);
    const done = await finished(acct, ((await created.json()) as { id: string }).id);
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    expect(us.requests.filter((r) => r.body.includes('regional line'))).toHaveLength(3);
    expect(eu.requests).toHaveLength(0);

    // In eu, whose only OpenAI channel fails: each line answers 503 region_unavailable, nothing reaches us.
    for (const f of [eu, us, claudeEu]) f.reset();
    eu.setDefault({ type: 'status', status: 500 });
    const failing = await submitBatch(acct, [{ model: 'gpt-4o-mini', content: 'kept in eu' }], { 'x-service-region': 'eu' });
    expect(failing.status).toBe(200);
    const failed = await finished(acct, ((await failing.json()) as { id: string }).id);
    expect(failed.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
    const errors = await (await fetch(`${gw.url}/v1/files/${failed.error_file_id}/content`, { headers: { authorization: `Bearer ${acct.apiKey}` } })).text();
    const line = JSON.parse(errors.trim()) as { response: { status_code: number; body: { error: { code: string } } } };
    expect(line.response.status_code).toBe(503);
    expect(line.response.body.error.code).toBe('region_unavailable');
    expect(eu.requests.length).toBeGreaterThan(0);
    expect(us.requests).toHaveLength(0);
  });

  it('a batch naming a model no channel of its region serves is a 503 at creation; a pinned account’s batch runs in its pin', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '5' });
    const refused = await submitBatch(acct, [{ model: 'claude-sonnet-4-5', content: 'not in us' }], { 'x-service-region': 'us' });
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(refused.status).toBe(503);
    expect(body.error.code).toBe('region_unavailable');
    expect(body.error.message).toContain('claude-sonnet-4-5');

    const pinned = await createAccount({ tier: 'pro', balanceUsd: '5' });
    await (await getDb()).user.update({ where: { id: pinned.userId }, data: { region: 'us' } });
    const created = await submitBatch(pinned, [{ model: 'gpt-4o-mini', content: 'pinned line' }], {});
    expect(created.status, await created.clone().text()).toBe(200);
    const done = await finished(pinned, ((await created.json()) as { id: string }).id);
    expect(done.request_counts.completed).toBe(1);
    expect(us.requests.filter((r) => r.body.includes('pinned line'))).toHaveLength(1);
    expect(eu.requests).toHaveLength(0);
    const other = await submitBatch(pinned, [{ model: 'gpt-4o-mini', content: 'x' }], { 'x-service-region': 'eu' });
    expect(other.status).toBe(403);
  });
});
