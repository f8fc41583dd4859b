// Users see providers by their public label, never the operator's channel names (#40 item 5): the
// logs API, its CSV, the log pages and the playground name a channel by its `label` from the
// operator config, or "OpenAI-compatible" and the like when it has none. A request that failed on
// every channel names the last provider tried, consistent with its attempts, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let failing: FakeUpstream;
let healthy: FakeUpstream;
let account: TestAccount;
let cookie: string;
const PREFIX = 'lbl-secret-';

beforeAll(async () => {
  failing = await startFakeUpstream();
  failing.setDefault({ type: 'status', status: 500 });
  healthy = await startFakeUpstream();
  const config = testConfig({ channelPrefix: PREFIX, openaiUrls: [failing.url, healthy.url] }) as { channels: Record<string, unknown>[] };
  delete config.channels[0]!.label;
  config.channels[1]!.label = 'Acme Cloud';
  gw = await startGateway({ config, env: { TRUST_PROXY: '1' } });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.40.5.1' },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  expect(res.status).toBe(200);
  cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([failing?.close(), healthy?.close()]);
  await (await getDb()).$disconnect();
});

const chat = () =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
  });
const get = (path: string) => fetch(`${gw.url}${path}`, { headers: { cookie } });

interface LogJson {
  id: string;
  channel: string | null;
  attempts: { channel: string; ok: boolean; status?: number }[];
}

async function logOf(id: string): Promise<LogJson> {
  return waitFor(async () => {
    const res = await get(`/api/logs/${id}`);
    return res.status === 200 ? ((await res.json()) as LogJson) : null;
  }, 10_000);
}

describe('provider labels', { timeout: 60_000 }, () => {
  it('a request served after a failed attempt names both providers by label, in order, in the API, the CSV and the pages', async () => {
    const res = await chat();
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const id = res.headers.get('x-request-id')!;
    // The reply's own header names the provider by its label too, never the channel's name.
    expect(res.headers.get('x-service-provider')).toBe('Acme Cloud');
    const log = await logOf(id);
    expect(log.channel).toBe('Acme Cloud');
    expect(log.attempts.map((a) => [a.channel, a.ok])).toEqual([
      ['OpenAI-compatible', false],
      ['Acme Cloud', true],
    ]);
    expect(log.attempts[0]!.status).toBe(500);
    const list = await (await get('/api/logs')).text();
    expect(list).toContain('"channel":"Acme Cloud"');
    const csv = await (await get('/api/logs/export')).text();
    expect(csv).toContain(',Acme Cloud,');
    for (const path of ['/dashboard/logs', `/dashboard/logs/${id}`]) {
      const html = await (await get(path)).text();
      expect(html, path).not.toContain(PREFIX);
    }
    expect(await (await get(`/dashboard/logs/${id}`)).text()).toContain('Acme Cloud');
    for (const text of [list, csv]) expect(text).not.toContain(PREFIX);
  });

  it('a request that failed everywhere names the last provider tried, as its attempts do', async () => {
    healthy.setDefault({ type: 'status', status: 500 });
    try {
      const res = await chat();
      expect(res.status).toBeGreaterThanOrEqual(500);
      // No channel served it: the header says so (the log names the providers tried).
      expect(res.headers.get('x-service-provider')).toBe('none');
      await res.arrayBuffer();
      const id = res.headers.get('x-request-id')!;
      const log = await logOf(id);
      const providers = log.attempts.map((a) => a.channel);
      expect(new Set(providers)).toEqual(new Set(['OpenAI-compatible', 'Acme Cloud']));
      expect(log.attempts.every((a) => !a.ok)).toBe(true);
      const html = await (await get(`/dashboard/logs/${id}`)).text();
      // The routing card names the provider of the last attempt, not a dash above a table of attempts.
      const routing = html.slice(html.indexOf('Last provider tried'), html.indexOf('Last provider tried') + 400);
      expect(routing).toContain(providers.at(-1)!);
      expect(html).not.toContain(PREFIX);
    } finally {
      healthy.setDefault({ type: 'ok' });
    }
  });
});
