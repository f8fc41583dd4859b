// #37 item 1: no page hands out data its visitor may not see, in its HTML or in its React Server
// Components payload. Every operator-console page (enumerated from app/, so a new page is covered
// the day it lands) is fetched without a session and with a normal user's session; every dashboard
// page without a session and with another account's session. Distinctive data of a victim account
// (email, balance, key name and prefix), the operator's email and a channel's upstream host are
// seeded first, and none of it may appear in any answer. The operator (and the victim on its own
// dashboard) sees the same markers: the control that shows the check can see a leak.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import type { TestAccount } from '../support/accounts';

type Accounts = typeof import('../support/accounts');
type Db = Awaited<ReturnType<typeof import('@/lib/db').getDb>>;

let accounts: Accounts;
let db: Db;
let fake: FakeUpstream;
let gw: RunningGateway;
const roomyLimits = { limits: { login_per_ip_per_minute: 10_000, register_per_ip_per_minute: 10_000 } };

let victim: TestAccount & { cookie: string };
let other: TestAccount & { cookie: string };
let operator: TestAccount & { cookie: string };
let victimKeyName: string;
let victimKeyPrefix: string;
let victimLogId: string;
let batchId: string;

/** Page routes under an app/ folder: `app/(group)/a/[id]/page.tsx` -> `/a/[id]`. */
function pageRoutes(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      const full = path.join(abs, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/^page\.(tsx|ts|jsx|js)$/.test(name)) {
        const segments = path
          .relative(path.join(ROOT, 'app'), abs)
          .split(path.sep)
          .filter((s) => s && !/^\(.*\)$/.test(s));
        out.push(`/${segments.join('/')}`);
      }
    }
  };
  walk(path.join(ROOT, dir));
  return out.sort();
}

/** A concrete URL for a route: every dynamic segment needs a value here, so a new one fails loudly. */
function concrete(route: string): string {
  const values: Record<string, string> = {
    '/admin/accounts/[id]': victim.userId,
    '/admin/logs/[id]': victimLogId,
    '/admin/codes/[batchId]': batchId,
    '/dashboard/logs/[id]': victimLogId,
    '/dashboard/[...missing]': 'no-such-page/deeper',
  };
  const dynamic = route.match(/\[[^\]]+\]/);
  if (!dynamic) return route;
  for (const [pattern, value] of Object.entries(values)) {
    if (route === pattern) return route.replace(/\[[^\]]+\]/, value);
  }
  throw new Error(`${route}: give its dynamic segment a value in concrete() so the exposure test covers it`);
}

async function login(a: TestAccount) {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return { ...a, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] };
}

const VARIANTS: Record<string, Record<string, string>> = {
  html: {},
  rsc: { rsc: '1' },
  prefetch: { rsc: '1', 'next-router-prefetch': '1' },
};

async function get(url: string, cookie: string | null, headers: Record<string, string>) {
  const res = await fetch(gw.url + url, { headers: { ...headers, ...(cookie ? { cookie } : {}) }, redirect: 'manual' });
  return { status: res.status, body: await res.text() };
}

function leaked(body: string, markers: Record<string, string>): string[] {
  return Object.entries(markers)
    .filter(([, v]) => body.toLowerCase().includes(v.toLowerCase()))
    .map(([k]) => k);
}

beforeAll(async () => {
  accounts = await import('../support/accounts');
  db = await (await import('@/lib/db')).getDb();
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], channelPrefix: 'exp-', overrides: roomyLimits }) });

  const { createKey } = await import('@/lib/accounts/queries');
  const { setRole } = await import('@/lib/admin/roles');
  const { CLI_ACTOR } = await import('@/lib/audit');
  const { createCodeBatch } = await import('@/lib/admin/redemption');

  victim = await login(await accounts.createAccount({ tier: 'pro', balanceUsd: '4321.987654' }));
  other = await login(await accounts.createAccount({ balanceUsd: '1' }));
  const op = await accounts.createAccount();
  await setRole(CLI_ACTOR, op.userId, 'admin');
  operator = await login(op);

  victimKeyName = `victim-key-${randomBytes(4).toString('hex')}`;
  const key = await createKey(victim.userId, victimKeyName);
  victimKeyPrefix = key.display.split('…')[0];
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(chat.status).toBe(200);
  victimLogId = (await accounts.waitFor(() => db.requestLog.findFirst({ where: { userId: victim.userId }, select: { id: true } }), 10_000)).id;
  // A code the victim redeemed: the batch page names who redeemed it.
  const batch = await createCodeBatch(CLI_ACTOR, { amountPico: 1_000_000_000_000n, count: 1 });
  batchId = batch.batchId;
  const redeemed = await fetch(`${gw.url}/api/payment/redeem`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: victim.cookie, origin: gw.url },
    body: JSON.stringify({ code: batch.codes[0].code }),
  });
  expect(redeemed.status, await redeemed.clone().text()).toBe(200);
}, 120_000);

afterAll(async () => {
  await gw?.stop('SIGKILL');
  await fake?.close();
});

/** What only the victim (and an operator) may see. */
function victimMarkers(): Record<string, string> {
  return {
    email: victim.email,
    keyName: victimKeyName,
    keyPrefix: victimKeyPrefix,
    balance: '4,321.98',
    balanceExact: '4321.98',
  };
}

describe('operator console pages', { timeout: 180_000 }, () => {
  it('the routes enumerated from app/ include the console and dashboard pages', () => {
    expect(pageRoutes('app/(admin)')).toEqual(expect.arrayContaining(['/admin', '/admin/accounts', '/admin/accounts/[id]', '/admin/logs/[id]']));
    expect(pageRoutes('app/(dashboard)')).toEqual(expect.arrayContaining(['/dashboard', '/dashboard/keys', '/dashboard/logs/[id]']));
  });

  it('answer no account, key, balance or channel data without a session or to a normal user, in HTML or RSC', async () => {
    const markers = { ...victimMarkers(), operatorEmail: operator.email, otherEmail: other.email, channelHost: new URL(fake.url).host };
    const urls = [
      ...pageRoutes('app/(admin)').map(concrete),
      `/admin/accounts?q=${encodeURIComponent(victim.email)}`,
      '/admin/accounts?q=%25',
      '/admin/accounts?q=example',
      `/admin/logs?account=${encodeURIComponent(victim.email)}`,
    ];
    const failures: string[] = [];
    for (const url of urls) {
      for (const [who, cookie] of [
        ['anonymous', null],
        ['user', other.cookie],
      ] as const) {
        for (const [variant, headers] of Object.entries(VARIANTS)) {
          const { status, body } = await get(url, cookie, headers);
          // The user's own email may be in its page (it is signed in): only others' data counts.
          const found = leaked(body, who === 'user' ? { ...markers, otherEmail: '\u0000' } : markers);
          if (found.length || status === 200 || status >= 500) failures.push(`${who} ${variant} ${url}: ${status} ${found.join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('an operator sees the data (the control: the markers are detectable)', async () => {
    const seen = async (url: string) => {
      const { status, body } = await get(url, operator.cookie, {});
      expect(status, url).toBe(200);
      return body;
    };
    for (const url of pageRoutes('app/(admin)').map(concrete)) await seen(url);
    expect(await seen(`/admin/accounts?q=${encodeURIComponent(victim.email)}`)).toContain(victim.email);
    const detail = await seen(`/admin/accounts/${victim.userId}`);
    expect(leaked(detail, victimMarkers())).toEqual(expect.arrayContaining(['email', 'keyName', 'keyPrefix', 'balance']));
    expect(await seen('/admin/channels')).toContain(new URL(fake.url).host);
    expect(await seen(`/admin/codes/${batchId}`)).toContain(victim.email);
  });
});

describe('an ended operator session', { timeout: 60_000 }, () => {
  it('opens no console page and no admin API after "sign out everywhere"', async () => {
    const { setRole } = await import('@/lib/admin/roles');
    const { CLI_ACTOR } = await import('@/lib/audit');
    const a = await accounts.createAccount();
    await setRole(CLI_ACTOR, a.userId, 'admin');
    const { cookie } = await login(a);
    expect((await get('/admin/accounts', cookie, {})).status).toBe(200);
    const ended = await fetch(`${gw.url}/api/account/sign-out-everywhere`, { method: 'POST', headers: { cookie, origin: gw.url } });
    expect(ended.status).toBe(200);
    const page = await get(`/admin/accounts?q=${encodeURIComponent(victim.email)}`, cookie, {});
    expect(page.status).toBe(401);
    expect(page.body).not.toContain(victim.email);
    expect((await get('/api/admin/accounts', cookie, {})).status).toBe(401);
  });
});

describe('dashboard pages', { timeout: 180_000 }, () => {
  it("show one account's data to nobody else: not to another account, not without a session", async () => {
    const markers = victimMarkers();
    const failures: string[] = [];
    for (const url of pageRoutes('app/(dashboard)').map(concrete)) {
      for (const [variant, headers] of Object.entries(VARIANTS)) {
        const anon = await get(url, null, headers);
        const anonFound = leaked(anon.body, { ...markers, otherEmail: other.email });
        if (anonFound.length || anon.status === 200 || anon.status >= 500) failures.push(`anonymous ${variant} ${url}: ${anon.status} ${anonFound.join(', ')}`);
        const asOther = await get(url, other.cookie, headers);
        const found = leaked(asOther.body, markers);
        if (found.length || asOther.status >= 500) failures.push(`other account ${variant} ${url}: ${asOther.status} ${found.join(', ')}`);
      }
    }
    expect(failures).toEqual([]);
    // The other account asking for the victim's request: not found, like an unknown id.
    expect((await get(`/dashboard/logs/${victimLogId}`, other.cookie, {})).status).toBe(404);
  });

  it('the victim sees its own data (the control)', async () => {
    const page = async (url: string) => (await get(url, victim.cookie, {})).body;
    expect(await page('/dashboard')).toContain(victim.email);
    expect(await page('/dashboard/keys')).toContain(victimKeyName);
    expect((await get(`/dashboard/logs/${victimLogId}`, victim.cookie, {})).status).toBe(200);
  });
});
