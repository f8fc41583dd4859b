// Issue 37, operations: /metrics label sets bounded whatever anonymous clients send (item 12), the
// client address behind trusted proxies (item 16), invalid API keys cheap and throttled per
// address (item 21), and a JSON log while Redis is unreachable (item 23), against the production build.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { generateApiKey } from '@/lib/keys/api-key';
import { createKeyWithControls } from '@/lib/keys/queries';
import { closeEvents } from '@/lib/events';

const METRICS_TOKEN = 'ops-hardening-metrics';
const INVALID_BUDGET = 5;
const LOGIN_BUDGET = 3;

let up: FakeUpstream;
/** Behind one appending proxy (TRUST_PROXY=1). */
let gwHop: RunningGateway;
/** Behind proxies named by range: the test's own connection (127.0.0.1) and 10.0.0.0/8. */
let gwRanges: RunningGateway;
let account: TestAccount;
/** Sends the 5,000 bogus model names (they count against its request rate). */
let flooder: TestAccount;

const chatBody = (model = 'deepseek-chat') => ({ model, messages: [{ role: 'user', content: 'Hi' }] });

function chat(gw: RunningGateway, apiKey: string, headers: Record<string, string> = {}, body: unknown = chatBody()): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
    body: JSON.stringify(body),
  });
}

async function metricsText(gw: RunningGateway): Promise<string> {
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one counter line (0 when the series does not exist yet). */
async function counter(gw: RunningGateway, series: string): Promise<number> {
  const line = (await metricsText(gw)).split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Runs `n` requests, `width` at a time. */
async function many(n: number, width: number, one: (i: number) => Promise<Response>): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const res = await one(next++);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  return statuses;
}

let ipSeq = 0;
/** An address of its own for each case: the per-address budgets do not carry over. */
const freshIp = () => `198.51.100.${++ipSeq}`;

beforeAll(async () => {
  up = await startFakeUpstream();
  const config = testConfig({
    openaiUrls: [up.url],
    anthropicUrls: [up.url],
    channelPrefix: 'opsh-',
    overrides: { limits: { login_per_ip_per_minute: LOGIN_BUDGET, invalid_keys_per_ip_per_minute: INVALID_BUDGET } },
  });
  [gwHop, gwRanges] = await Promise.all([
    startGateway({ config, env: { TRUST_PROXY: '1', METRICS_TOKEN } }),
    startGateway({ config, env: { TRUST_PROXY: '127.0.0.1, ::1, 10.0.0.0/8', METRICS_TOKEN } }),
  ]);
  [account, flooder] = await Promise.all([createAccount({ tier: 'pro', balanceUsd: '50' }), createAccount({ tier: 'pro', balanceUsd: '50' })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([gwHop?.stop(), gwRanges?.stop()]);
  await up?.close();
  await closeEvents();
});

describe('/metrics cardinality', () => {
  it('5,000 unknown paths and 5,000 unknown model names leave the /metrics body essentially unchanged', { timeout: 180_000 }, async () => {
    const unknownPath = (i: number) => fetch(`${gwHop.url}/v1/nothing-here-${i}/x${i}`, { method: i % 2 ? 'GET' : 'POST' });
    const bogusModel = (i: number) => chat(gwHop, flooder.apiKey, { 'x-forwarded-for': `10.9.${i % 250}.1` }, chatBody(`no-such-model-${i}`));
    // One of each first: the series they make exist before the measurement.
    await (await unknownPath(0)).arrayBuffer();
    await (await unknownPath(1)).arrayBuffer();
    await (await bogusModel(0)).arrayBuffer();
    const before = (await metricsText(gwHop)).length;
    const statuses = [...(await many(5_000, 16, (i) => unknownPath(i + 2))), ...(await many(5_000, 16, (i) => bogusModel(i + 1)))];
    expect(new Set(statuses)).not.toContain(500);
    const after = await metricsText(gwHop);
    // Counters grow by a few digits; a label set per path or model would add ~100 bytes each.
    expect(after.length - before).toBeLessThan(2_000);
    expect(after).not.toContain('nothing-here');
    expect(after).not.toContain('no-such-model');
    expect(after).toMatch(/gateway_requests_total\{endpoint="other",status="404"\} \d+/);
  });
});

describe('the client address behind trusted proxies', () => {
  it('TRUST_PROXY=1 takes the entry the proxy appended, not the one the client wrote', async () => {
    const key = await createKeyWithControls(account.userId, { name: 'ranges', allowed_ips: ['203.0.113.0/24'] });
    // The client claims an allowed address; the proxy appends the one it saw.
    const spoofed = await chat(gwHop, key.key, { 'x-forwarded-for': '203.0.113.7, 198.51.100.200' });
    expect(spoofed.status, await spoofed.clone().text()).toBe(403);
    expect(((await spoofed.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'ip_not_allowed',
      message: expect.stringContaining('198.51.100.200'),
    });
    const real = await chat(gwHop, key.key, { 'x-forwarded-for': '198.51.100.200, 203.0.113.7' });
    expect(real.status, await real.clone().text()).toBe(200);
  });

  it('trusted proxy ranges: the first address from the right that is not a trusted proxy', async () => {
    const key = await createKeyWithControls(account.userId, { name: 'ranges', allowed_ips: ['203.0.113.0/24'] });
    const spoofed = await chat(gwRanges, key.key, { 'x-forwarded-for': '203.0.113.7, 198.51.100.201, 10.1.2.3' });
    expect(spoofed.status, await spoofed.clone().text()).toBe(403);
    const real = await chat(gwRanges, key.key, { 'x-forwarded-for': '198.51.100.201, 203.0.113.7, 10.1.2.3' });
    expect(real.status, await real.clone().text()).toBe(200);
  });

  it('the per-address login limit counts the address the proxy saw, whatever the client prepends', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= LOGIN_BUDGET; i++) {
      const res = await fetch(`${gwHop.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: gwHop.url, 'x-forwarded-for': `192.0.2.${i + 1}, 203.0.113.99` },
        body: JSON.stringify({ email: account.email, password: 'not-the-password-1' }),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses.slice(0, LOGIN_BUDGET)).not.toContain(429);
    expect(statuses[LOGIN_BUDGET]).toBe(429);
  });
});

describe('invalid API keys', () => {
  const lookups = (gw: RunningGateway) => counter(gw, 'gateway_key_lookups_total{result="invalid"}');

  it('one key sent again and again is looked up in the database once', async () => {
    const keys = [generateApiKey().key, generateApiKey().key, generateApiKey().key];
    const start = await lookups(gwHop);
    // Each request from an address of its own (no throttle), concurrent and then again.
    for (let round = 0; round < 2; round++) {
      const statuses = await many(30, 10, (i) => chat(gwHop, keys[i % 3], { 'x-forwarded-for': freshIp() }));
      expect(statuses).toEqual(Array(30).fill(401));
    }
    expect((await lookups(gwHop)) - start).toBe(3);
  });

  it('an address past its budget of invalid keys gets 429 with Retry-After in the surface envelope, without a lookup', async () => {
    const ip = freshIp();
    for (let i = 0; i < INVALID_BUDGET; i++) {
      const res = await chat(gwHop, generateApiKey().key, { 'x-forwarded-for': ip });
      expect(res.status, await res.text()).toBe(401);
    }
    const start = await lookups(gwHop);
    const refused = await chat(gwHop, generateApiKey().key, { 'x-forwarded-for': ip });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(((await refused.json()) as { error: { code: string; type: string } }).error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit' });
    const anthropic = await fetch(`${gwHop.url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': generateApiKey().key, 'anthropic-version': '2023-06-01', 'x-forwarded-for': ip },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(anthropic.status).toBe(429);
    expect(anthropic.headers.get('retry-after')).not.toBeNull();
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(await lookups(gwHop)).toBe(start);
    // The spoofed first entry changes nothing: the address is the proxy's entry.
    const spoofed = await chat(gwHop, generateApiKey().key, { 'x-forwarded-for': `${freshIp()}, ${ip}` });
    expect(spoofed.status).toBe(429);
  });

  it('keys in use keep working from a throttled address; a new key works at once from another', async () => {
    const ip = freshIp();
    const inUse = await chat(gwHop, account.apiKey, { 'x-forwarded-for': ip });
    expect(inUse.status, await inUse.text()).toBe(200);
    for (let i = 0; i <= INVALID_BUDGET; i++) await (await chat(gwHop, generateApiKey().key, { 'x-forwarded-for': ip })).arrayBuffer();
    expect((await chat(gwHop, generateApiKey().key, { 'x-forwarded-for': ip })).status).toBe(429);
    const again = await chat(gwHop, account.apiKey, { 'x-forwarded-for': ip });
    expect(again.status, await again.text()).toBe(200);
    const created = await createKeyWithControls(account.userId, { name: 'fresh' });
    const fresh = await chat(gwHop, created.key, { 'x-forwarded-for': freshIp() });
    expect(fresh.status, await fresh.text()).toBe(200);
  });
});

describe('Redis unreachable', () => {
  it('the log stays JSON: client errors are JSON lines, rate-limited, never ioredis stack traces', { timeout: 120_000 }, async () => {
    const closed = await freePort(); // nothing listens there
    const started = Date.now();
    const gw = await startGateway({ config: testConfig({ openaiUrls: [up.url], channelPrefix: 'opsh-' }), env: { REDIS_URL: `redis://127.0.0.1:${closed}` } });
    let ran = 0;
    try {
      // Every Redis user: the limiter and events (/v1), the login throttle and the console (route handlers).
      for (let i = 0; i < 3; i++) {
        await (await chat(gw, account.apiKey)).arrayBuffer();
        await (
          await fetch(`${gw.url}/api/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: gw.url },
            body: JSON.stringify({ email: account.email, password: 'not-the-password-1' }),
          })
        ).arrayBuffer();
      }
      await new Promise((r) => setTimeout(r, 2_000)); // reconnect attempts, each an error
    } finally {
      await gw.stop();
      ran = Date.now() - started;
    }
    const lines = gw.output().split('\n');
    expect(lines.filter((l) => /\[ioredis\]|Unhandled error event|^\s+at /.test(l))).toEqual([]);
    const errors = lines.filter((l) => l.includes('"redis client error"')).map((l) => JSON.parse(l) as { role: string; error: string });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => /ECONNREFUSED/.test(e.error))).toBe(true);
    // At most one line per client per 10 s, however many reconnect attempts failed meanwhile.
    const perRole = new Map<string, number>();
    for (const e of errors) perRole.set(e.role, (perRole.get(e.role) ?? 0) + 1);
    for (const [role, n] of perRole) expect(n, role).toBeLessThanOrEqual(1 + Math.floor(ran / 10_000));
  });
});
