// Issue 44 item 5 against the built server: what each channel recorded per UTC day and model (JSON,
// CSV and the console page), and a provider's usage export (OpenAI's, Anthropic's) compared with it
// per day and model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let fake: FakeUpstream;
let user: TestAccount;
let adminCookie: string;
let userCookie: string;
const PREFIX = `rec${randomBytes(3).toString('hex')}-`;
const OPENAI = `${PREFIX}openai-1`;
const ANTHROPIC = `${PREFIX}anthropic-1`;
const today = new Date().toISOString().slice(0, 10);

async function login(a: TestAccount): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

function api(cookie: string, method: string, path: string, body?: unknown, type = 'application/json') {
  return fetch(`${gw.url}${path}`, {
    method,
    headers: { cookie, origin: gw.url, ...(body === undefined ? {} : { 'content-type': type }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** What the request log holds for a channel today: the expected report. */
async function logged(channel: string) {
  const db = await getDb();
  const rows = await db.requestLog.findMany({ where: { channel, createdAt: { gte: new Date(`${today}T00:00:00Z`) } } });
  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
  return {
    requests: rows.length,
    uncached: sum((r) => r.promptTokens),
    read: sum((r) => r.cacheReadTokens),
    write: sum((r) => r.cacheWriteTokens),
    output: sum((r) => r.completionTokens),
  };
}

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], channelPrefix: PREFIX }) });
  user = await createAccount({ tier: 'pro', balanceUsd: '5' });
  const admin = await createAccount({ tier: 'pro' });
  const db = await getDb();
  await db.user.update({ where: { id: admin.userId }, data: { role: 'admin' } });
  [adminCookie, userCookie] = await Promise.all([login(admin), login(user)]);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `count to ${i + 3}` }] }),
    });
    expect(res.status).toBe(200);
  }
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${gw.url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': user.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 50,
        system: [{ type: 'text', text: `Be brief ${PREFIX}`, cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: `turn ${i}` }],
      }),
    });
    expect(res.status).toBe(200);
  }
  await waitFor(async () => (await logged(OPENAI)).requests === 3 && (await logged(ANTHROPIC)).requests === 2, 10_000);
}, 120_000);

afterAll(async () => {
  await gw?.stop('SIGKILL');
  await fake?.close();
});

describe('recorded usage per channel and day', () => {
  it('the JSON and the CSV carry each channel’s requests, token classes and cost; only operators may read them', async () => {
    const want = await logged(OPENAI);
    const res = await api(adminCookie, 'GET', `/api/admin/reconciliation?from=${today}&to=${today}&channel=${OPENAI}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rows: Record<string, unknown>[] };
    expect(body.rows).toEqual([
      expect.objectContaining({
        day: today,
        channel: OPENAI,
        protocol: 'openai',
        model: 'gpt-4o-mini',
        requests: 3,
        uncached_input_tokens: want.uncached,
        cache_read_tokens: want.read,
        output_tokens: want.output,
      }),
    ]);
    expect(Number(body.rows[0].cost_usd)).toBeGreaterThan(0);

    const csv = await api(adminCookie, 'GET', `/api/admin/reconciliation?from=${today}&to=${today}&channel=${OPENAI}&format=csv`);
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    const lines = (await csv.text()).trim().split(/\r?\n/);
    expect(lines[0]).toBe('day,channel,protocol,model,requests,uncached_input_tokens,cache_read_tokens,cache_write_tokens,output_tokens,cost_usd');
    expect(lines[1]).toBe(`${today},${OPENAI},openai,gpt-4o-mini,3,${want.uncached},${want.read},${want.write},${want.output},${body.rows[0].cost_usd}`);

    expect((await api(userCookie, 'GET', '/api/admin/reconciliation')).status).toBe(403);
    const bad = await api(adminCookie, 'GET', '/api/admin/reconciliation?from=yesterday');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('from');
  });

  it('the console page lists the channel’s day', async () => {
    const res = await fetch(`${gw.url}/admin/reconciliation?from=${today}&to=${today}`, { headers: { cookie: adminCookie } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(OPENAI);
    expect(html).toContain('Compare with a provider export');
  });
});

describe('a provider export against what we recorded', () => {
  it('an OpenAI usage export (dated model names, unix start times) matches, and a difference is shown per day and model', async () => {
    const want = await logged(OPENAI);
    const start = Math.floor(new Date(`${today}T00:00:00Z`).getTime() / 1000);
    const header =
      'start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,user_id,api_key_id,model,batch,service_tier,input_tokens,output_tokens,input_cached_tokens,input_audio_tokens,output_audio_tokens';
    const line = (output: number) =>
      `${start},${start + 86400},${today}T00:00:00+00:00,,proj_1,3,,,gpt-4o-mini-2024-07-18,False,default,${want.uncached + want.read},${output},${want.read},0,0`;
    const same = await api(adminCookie, 'POST', '/api/admin/reconciliation', { csv: `${header}\n${line(want.output)}\n`, channel: OPENAI });
    expect(same.status).toBe(200);
    const ok = (await same.json()) as { format: string; differing: number; rows: { day: string; model: string; matches: boolean }[] };
    expect(ok).toMatchObject({ format: 'openai', differing: 0 });
    expect(ok.rows).toEqual([expect.objectContaining({ day: today, model: 'gpt-4o-mini', matches: true })]);

    // The export as the body itself (text/csv), one day later than ours and 5 output tokens more.
    const more = await api(adminCookie, 'POST', `/api/admin/reconciliation?channel=${OPENAI}`, `${header}\n${line(want.output + 5)}\n`, 'text/csv');
    const diff = (await more.json()) as {
      differing: number;
      rows: { matches: boolean; difference: Record<string, number>; provider: Record<string, number> }[];
    };
    expect(diff.differing).toBe(1);
    expect(diff.rows[0].difference).toEqual({ uncached_input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 5 });
  });

  it('an Anthropic messages usage report (cache reads and 5-minute writes apart) matches', async () => {
    const want = await logged(ANTHROPIC);
    expect(want.read + want.write).toBeGreaterThan(0);
    const csv = [
      'starting_at,ending_at,model,service_tier,context_window,uncached_input_tokens,cache_read_input_tokens,cache_creation_5m_input_tokens,cache_creation_1h_input_tokens,output_tokens',
      `${today}T00:00:00Z,,claude-sonnet-4-5-20250929,standard,0-200k,${want.uncached},${want.read},${want.write},0,${want.output}`,
    ].join('\r\n');
    const res = await api(adminCookie, 'POST', '/api/admin/reconciliation', { csv, channel: ANTHROPIC });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ format: 'anthropic', differing: 0, rows: [{ day: today, model: 'claude-sonnet-4-5', matches: true }] });
  });

  it('an export it cannot read is a 400 naming the problem, in English and Chinese', async () => {
    const res = await api(adminCookie, 'POST', '/api/admin/reconciliation', { csv: 'date,amount\n2026-11-01,4.20\n' });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { param: string; message_code: string; message: string } }).error;
    expect(err).toMatchObject({ param: 'csv', message_code: 'reconcile.format' });
    const badNumber = await api(adminCookie, 'POST', '/api/admin/reconciliation', {
      csv: 'start_time,model,input_tokens,output_tokens\n1764288000,gpt-4o-mini,lots,1\n',
    });
    expect(badNumber.status).toBe(400);
    expect(((await badNumber.json()) as { error: { message: string } }).error.message).toBe('Line 2: input_tokens is not a token count.');
    const unknown = await api(adminCookie, 'POST', '/api/admin/reconciliation', {
      csv: 'start_time,model,input_tokens,output_tokens\n1764288000,gpt-4o-mini,1,1\n',
      channel: 'nope',
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe('channel');
  });
});
