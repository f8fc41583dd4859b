// Budget alerts end to end against the production build: the settings API, thresholds of key
// budgets firing once each across two gateway instances, the low-balance alert and its re-arming,
// webhooks received on a local server with their signature and timestamp verified, retries after
// a 500 carrying the same idempotency id, giving up after ALERT_MAX_ATTEMPTS, and dismissal.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { logRecord } from '../support/log-record';
import { getDb } from '@/lib/db';
import { closeLogWriter, enqueueLog, flushLogs } from '@/lib/billing/writer';
import { usdToPico } from '@/lib/money';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';
import { verifyWebhook } from '@/lib/alerts/signing';

const ALERT_ENV = { ALERT_EVAL_MS: '150', ALERT_RETRY_BASE_MS: '200', ALERT_MAX_ATTEMPTS: '3', ALERT_WEBHOOK_ALLOW_PRIVATE: '1', TRUST_PROXY: '1' };

let up: FakeUpstream;
let gwA: RunningGateway;
let gwB: RunningGateway;

// ---- the webhook receiver -----------------------------------------------------------------

interface Received {
  path: string;
  headers: Record<string, string | undefined>;
  body: string;
  at: number;
}

const received: Received[] = [];
/** Status to answer per path, by the delivery's number on that path (1-based); 200 when unset. */
const behaviour = new Map<string, (n: number) => number>();
let receiver: http.Server;
let hookBase: string;

function hits(path: string): Received[] {
  return received.filter((r) => r.path === path);
}

// ---- the account API (session cookie) -----------------------------------------------------

let loginSeq = 0;
async function login(a: TestAccount): Promise<string> {
  const ip = `198.19.${Math.floor(loginSeq / 250) % 250}.${(loginSeq++ % 250) + 1}`;
  const res = await fetch(`${gwA.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: gwA.url, 'x-forwarded-for': ip },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

function api(cookie: string, method: string, path: string, body?: unknown, origin = gwA.url): Promise<Response> {
  return fetch(`${gwA.url}${path}`, {
    method,
    headers: { cookie, origin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function apiJson<T>(cookie: string, method: string, path: string, body?: unknown, status = 200): Promise<T> {
  const res = await api(cookie, method, path, body);
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

interface Settings {
  webhook_url: string | null;
  thresholds: number[];
  low_balance_usd: string | null;
  enabled: boolean;
  secret_hint: string | null;
  secret?: string;
}

interface EventJson {
  id: string;
  type: string;
  message: string;
  data: Record<string, unknown>;
  dismissed_at: string | null;
  delivery: { status: string; attempts: number; delivered_at: string | null; last_error: string | null };
}

/** An account signed in, with alert settings pointing at its own receiver path; answers the secret. */
async function alertingAccount(opts: { balanceUsd?: string; settings?: Record<string, unknown> } = {}) {
  const account = await createAccount({ tier: 'pro', balanceUsd: opts.balanceUsd ?? '50' });
  const cookie = await login(account);
  const path = `/hook/${randomUUID()}`;
  const saved = await apiJson<Settings>(cookie, 'PUT', '/api/alerts/settings', { webhook_url: `${hookBase}${path}`, ...opts.settings });
  expect(saved.secret).toMatch(/^whsec_/);
  return { account, cookie, path, secret: saved.secret as string };
}

/** Spend recorded for a key as a request records it: a request-log row, and the key marked used. */
async function spend(account: TestAccount, keyId: string, usd: string): Promise<void> {
  const db = await getDb();
  await db.apiKey.update({ where: { id: keyId }, data: { lastUsedAt: new Date() } });
  // Through the batch writer, as the gateway logs a request: key spend is read from the rollup it keeps.
  enqueueLog(
    logRecord(account.userId, {
      createdAt: new Date(),
      apiKeyId: keyId,
      modelRequested: null,
      modelServed: null,
      channel: null,
      promptTokens: 0,
      completionTokens: 0,
      costPico: usdToPico(usd),
      costCnyPico: 0n,
    }),
  );
  await flushLogs();
}

async function events(cookie: string, query = ''): Promise<EventJson[]> {
  return (await apiJson<{ data: EventJson[] }>(cookie, 'GET', `/api/alerts${query}`)).data;
}

/** A few evaluation rounds on both instances, for "nothing more arrives" checks. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const status = behaviour.get(path)?.(hits(path).length) ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  up = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [up.url] });
  [gwA, gwB] = await Promise.all([startGateway({ config, env: ALERT_ENV }), startGateway({ config, env: ALERT_ENV })]);
});

afterAll(async () => {
  await Promise.all([gwA?.stop(), gwB?.stop()]);
  await up?.close();
  await new Promise((r) => receiver?.close(r));
  await getLimiter().close();
  await closeEvents();
  await closeLogWriter();
  await (await getDb()).$disconnect();
});

describe('settings API', () => {
  it('answers defaults, shows the signing secret once, validates, and regenerates it', async () => {
    const account = await createAccount();
    const cookie = await login(account);
    expect(await apiJson<Settings>(cookie, 'GET', '/api/alerts/settings')).toEqual({
      webhook_url: null,
      thresholds: [50, 80, 100],
      low_balance_usd: null,
      enabled: false,
      secret_hint: null,
    });

    const first = await apiJson<Settings>(cookie, 'PUT', '/api/alerts/settings', { thresholds: [90, 25], low_balance_usd: '2.5' });
    expect(first).toMatchObject({ thresholds: [25, 90], low_balance_usd: '2.5', enabled: true, webhook_url: null });
    expect(first.secret).toMatch(/^whsec_/);
    expect(first.secret_hint).toBe(`${first.secret!.slice(0, 6)}…${first.secret!.slice(-4)}`);

    const second = await apiJson<Settings>(cookie, 'PUT', '/api/alerts/settings', { webhook_url: `${hookBase}/x` });
    expect(second.secret).toBeUndefined();
    expect(second).toMatchObject({ thresholds: [25, 90], webhook_url: `${hookBase}/x`, secret_hint: first.secret_hint });

    const bad = await api(cookie, 'PUT', '/api/alerts/settings', { thresholds: [0, 50] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('thresholds');

    const crossSite = await api(cookie, 'PUT', '/api/alerts/settings', { thresholds: [10] }, 'https://evil.example');
    expect(crossSite.status).toBe(403);

    const regenerated = await apiJson<Settings>(cookie, 'POST', '/api/alerts/settings/secret');
    expect(regenerated.secret).toMatch(/^whsec_/);
    expect(regenerated.secret).not.toBe(first.secret);

    const anonymous = await fetch(`${gwA.url}/api/alerts/settings`);
    expect(anonymous.status).toBe(401);
  });
});

describe('key budget thresholds', () => {
  it('fire 50, 80 and 100 % once each across two instances, signed, and show in the API until dismissed', async () => {
    const { account, cookie, path, secret } = await alertingAccount();
    const key = await apiJson<{ id: string }>(cookie, 'POST', '/api/keys', { name: 'ci', budget_usd: 1, monthly_budget_usd: 10 }, 201);

    await spend(account, key.id, '0.4');
    await settle();
    expect(hits(path)).toHaveLength(0);

    await spend(account, key.id, '0.1'); // 0.5 of 1: 50 %
    await waitFor(async () => hits(path).length >= 1, 15_000);
    await spend(account, key.id, '0.35'); // 0.85: 80 %
    await waitFor(async () => hits(path).length >= 2, 15_000);
    await spend(account, key.id, '0.5'); // 1.35: 100 % (the monthly 10 USD budget stays under 50 %)
    await waitFor(async () => hits(path).length >= 3, 15_000);
    await settle();

    const got = hits(path);
    expect(got).toHaveLength(3); // once each, though both instances evaluate every 150 ms
    const bodies = got.map((r) => {
      // Signed over id, timestamp and raw body, with a current timestamp.
      const parsed = verifyWebhook(secret, r.headers, r.body) as { id: string; type: string; data: Record<string, unknown> };
      expect(parsed.id).toBe(r.headers['webhook-id']);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - r.at / 1000)).toBeLessThan(60);
      expect(r.headers['content-type']).toBe('application/json');
      return parsed;
    });
    expect(new Set(bodies.map((b) => b.id)).size).toBe(3);
    expect(bodies.map((b) => b.data.threshold_percent)).toEqual([50, 80, 100]);
    expect(bodies[2]).toMatchObject({
      type: 'key.budget.threshold',
      data: { account_id: account.userId, budget: 'lifetime', period: 'lifetime', budget_usd: '1', spent_usd: '1.35', key: { id: key.id, name: 'ci' } },
    });
    expect(bodies[0]!.id).toMatch(/^evt_[0-9a-f]{32}$/);

    const list = await events(cookie);
    expect(list.map((e) => e.data.threshold_percent)).toEqual(expect.arrayContaining([50, 80, 100]));
    expect(list).toHaveLength(3);
    for (const e of list) expect(e.delivery).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(list.find((e) => e.data.threshold_percent === 100)!.message).toContain('100% of its lifetime budget');

    // Dismissed alerts leave the banner's list; another account cannot dismiss them.
    const other = await login(await createAccount());
    expect((await api(other, 'POST', `/api/alerts/${list[0]!.id}/dismiss`)).status).toBe(404);
    const dismissed = await apiJson<EventJson>(cookie, 'POST', `/api/alerts/${list[0]!.id}/dismiss`);
    expect(dismissed.dismissed_at).not.toBeNull();
    expect((await events(cookie, '?undismissed=1')).map((e) => e.id)).not.toContain(list[0]!.id);
  });

  it('raising the budget re-arms its thresholds; the monthly budget fires with its month', async () => {
    const { account, cookie, path } = await alertingAccount({ settings: { thresholds: [100] } });
    const key = await apiJson<{ id: string }>(cookie, 'POST', '/api/keys', { name: 'm', monthly_budget_usd: '0.2' }, 201);
    await spend(account, key.id, '0.25');
    await waitFor(async () => hits(path).length >= 1, 15_000);
    const month = new Date().toISOString().slice(0, 7);
    expect(JSON.parse(hits(path)[0]!.body)).toMatchObject({ data: { budget: 'monthly', period: month, threshold_percent: 100 } });

    await apiJson(cookie, 'PATCH', `/api/keys/${key.id}`, { monthly_budget_usd: '0.5' });
    await settle();
    expect(hits(path)).toHaveLength(1);
    await spend(account, key.id, '0.3');
    await waitFor(async () => hits(path).length >= 2, 15_000);
    expect(JSON.parse(hits(path)[1]!.body)).toMatchObject({ data: { budget_usd: '0.5', spent_usd: '0.55' } });
  });

  it('setting a budget below its spend again and again does not fire its thresholds again (#37 item 11)', async () => {
    const { account, cookie, path } = await alertingAccount();
    const key = await apiJson<{ id: string }>(cookie, 'POST', '/api/keys', { name: 'churn', budget_usd: '1' }, 201);
    await spend(account, key.id, '2');
    await waitFor(async () => hits(path).length >= 3, 15_000); // 50, 80 and 100 %
    // Each value is new (a new event id each, before): 20 edits once made 60 alerts.
    for (let i = 0; i < 20; i++) {
      await apiJson(cookie, 'PATCH', `/api/keys/${key.id}`, { budget_usd: (1.9 - i * 0.05).toFixed(2) });
      if (i % 5 === 4) await settle();
    }
    await settle();
    expect(hits(path)).toHaveLength(3);
    expect(await (await getDb()).alertEvent.count({ where: { userId: account.userId } })).toBe(3);
    // Raised above the spend, the thresholds it puts ahead are armed again: 50 % of 10 at 5.
    await apiJson(cookie, 'PATCH', `/api/keys/${key.id}`, { budget_usd: '10' });
    await settle();
    expect(hits(path)).toHaveLength(3);
    await spend(account, key.id, '3.5');
    await waitFor(async () => hits(path).length >= 4, 15_000);
    await settle();
    const thresholds = hits(path).map((h) => (JSON.parse(h.body) as { data: { threshold_percent: number } }).data.threshold_percent);
    expect([...thresholds.slice(0, 3)].sort((x, y) => x - y)).toEqual([50, 80, 100]);
    expect(thresholds.slice(3)).toEqual([50]);
  });
});

describe('key budget thresholds, through the gateway', () => {
  it("a real request's spend fires the threshold, with the spend the keys API shows", async () => {
    const { cookie, path } = await alertingAccount({ settings: { thresholds: [1] } });
    const key = await apiJson<{ id: string; key: string }>(cookie, 'POST', '/api/keys', { name: 'live', budget_usd: '0.001' }, 201);
    const res = await fetch(`${gwB.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
      body: JSON.stringify({ model: 'gpt-4o', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await res.arrayBuffer();
    await waitFor(async () => hits(path).length >= 1, 20_000);
    const event = JSON.parse(hits(path)[0]!.body) as { data: { spent_usd: string; threshold_percent: number } };
    const listed = (await apiJson<{ data: { id: string; spend: { total_usd: string } }[] }>(cookie, 'GET', '/api/keys')).data.find((k) => k.id === key.id)!;
    expect(event.data).toMatchObject({ threshold_percent: 1, spent_usd: listed.spend.total_usd });
    expect(Number(listed.spend.total_usd)).toBeGreaterThan(0);
  });
});

describe('low balance', () => {
  it('fires once while low, and again after the balance has been back above the threshold', async () => {
    const { account, cookie, path, secret } = await alertingAccount({ balanceUsd: '3', settings: { low_balance_usd: 5 } });
    await waitFor(async () => hits(path).length >= 1, 15_000);
    await settle();
    expect(hits(path)).toHaveLength(1);
    const first = verifyWebhook(secret, hits(path)[0]!.headers, hits(path)[0]!.body);
    expect(first).toMatchObject({ type: 'account.balance.low', data: { account_id: account.userId, balance_usd: '3', threshold_usd: '5' } });

    const db = await getDb();
    await db.user.update({ where: { id: account.userId }, data: { balanceUsd: '20' } });
    // Re-armed once an evaluation has seen the balance back above the threshold.
    await waitFor(async () => (await db.alertSettings.findUniqueOrThrow({ where: { userId: account.userId } })).lowBalanceFired === false, 15_000);
    await settle();
    expect(hits(path)).toHaveLength(1);
    await db.user.update({ where: { id: account.userId }, data: { balanceUsd: '1' } });
    await waitFor(async () => hits(path).length >= 2, 15_000);
    const second = JSON.parse(hits(path)[1]!.body) as { id: string; data: Record<string, string> };
    expect(second.id).not.toBe((first as { id: string }).id);
    expect(second.data.balance_usd).toBe('1');
    expect((await events(cookie, '?undismissed=1')).filter((e) => e.type === 'account.balance.low')).toHaveLength(2);
  });
});

describe('delivery', () => {
  it('retries after a 500 with the same idempotency id, signed afresh, until a 2xx', async () => {
    const { account, cookie, path, secret } = await alertingAccount({ balanceUsd: '1', settings: { low_balance_usd: 2 } });
    behaviour.set(path, (n) => (n === 1 ? 500 : 200));
    await waitFor(async () => hits(path).length >= 2, 15_000);
    await settle();
    const got = hits(path);
    expect(got).toHaveLength(2);
    expect(got[1]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id']);
    expect(got[1]!.body).toBe(got[0]!.body);
    for (const r of got) verifyWebhook(secret, r.headers, r.body);
    const [event] = await events(cookie);
    expect(event).toMatchObject({ id: got[0]!.headers['webhook-id'], delivery: { status: 'delivered', attempts: 2, last_error: null } });
    expect(account.userId).toBeTruthy();
  });

  it('gives up after ALERT_MAX_ATTEMPTS failures and says why', async () => {
    const { cookie, path } = await alertingAccount({ balanceUsd: '1', settings: { low_balance_usd: 2 } });
    behaviour.set(path, () => 503);
    await waitFor(async () => (await events(cookie))[0]?.delivery.status === 'failed', 20_000);
    const [event] = await events(cookie);
    expect(event!.delivery.attempts).toBe(3);
    expect(event!.delivery.last_error).toMatch(/gave up after 3 attempts: HTTP 503/);
    await settle();
    expect(hits(path)).toHaveLength(3);
  });

  it('records alerts without a webhook for the dashboard only', async () => {
    const account = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const cookie = await login(account);
    await apiJson(cookie, 'PUT', '/api/alerts/settings', { low_balance_usd: 2 });
    const [event] = await waitFor(async () => {
      const list = await events(cookie);
      return list.length ? list : null;
    }, 15_000);
    expect(event!.delivery).toMatchObject({ status: 'not_sent', attempts: 0 });
  });
});
