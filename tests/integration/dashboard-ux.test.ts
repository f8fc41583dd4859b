// The dashboard's behaviour on any origin and its usage API (#31), against the built server and the
// real PostgreSQL/Redis: next-auth's URLs follow the request's origin when NEXTAUTH_URL is unset
// (X-Forwarded-* only with TRUST_PROXY=1), deep links survive the login redirect, /login skips
// ahead when signed in, missing records answer 404, sign-up refuses what the shared rule refuses,
// and GET /api/usage breaks spend down by day, model and key over a date range, also as CSV.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';

type Accounts = typeof import('../support/accounts');
type Db = Awaited<ReturnType<typeof import('@/lib/db').getDb>>;

let accounts: Accounts;
let db: Db;
let fake: FakeUpstream;
let direct: RunningGateway; // no TRUST_PROXY, no NEXTAUTH_URL, on a random port
let proxied: RunningGateway; // TRUST_PROXY=1, no NEXTAUTH_URL (behind a path-less reverse proxy)
const roomyLimits = { limits: { login_per_ip_per_minute: 10_000, register_per_ip_per_minute: 10_000 } };
const noPublicUrl = { NEXTAUTH_URL: '', PUBLIC_BASE_URL: '' };

beforeAll(async () => {
  accounts = await import('../support/accounts');
  db = await (await import('@/lib/db')).getDb();
  fake = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [fake.url], overrides: roomyLimits });
  [direct, proxied] = await Promise.all([
    startGateway({ config, env: { ...noPublicUrl, TRUST_PROXY: '0' } }),
    startGateway({ config, env: { ...noPublicUrl, TRUST_PROXY: '1' } }),
  ]);
});

afterAll(async () => {
  await Promise.all([direct, proxied].filter(Boolean).map((g) => g.stop('SIGKILL')));
  await fake?.close();
  await (await import('@/lib/limits/runtime')).getLimiter().close();
  await (await import('@/lib/billing/writer')).closeLogWriter();
  await db?.$disconnect();
});

const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]);

async function sessionFor(gw: RunningGateway, email: string, password: string): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return cookiesOf(res).join('; ');
}

/** POST /api/auth/signout as next-auth's signOut() sends it; the answer's JSON url. */
async function signOutUrl(gw: RunningGateway, session: string, headers: Record<string, string> = {}): Promise<string> {
  const csrf = await fetch(`${gw.url}/api/auth/csrf`, { headers: { cookie: session, ...headers } });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = [session, ...cookiesOf(csrf)].join('; ');
  const res = await fetch(`${gw.url}/api/auth/signout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: gw.url, ...headers },
    body: new URLSearchParams({ csrfToken, callbackUrl: '/', json: 'true' }),
    redirect: 'manual',
  });
  expect(res.status).toBe(200);
  const cleared = res.headers.getSetCookie().find((c) => c.startsWith('next-auth.session-token='));
  expect(cleared).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/i);
  return ((await res.json()) as { url: string }).url;
}

describe('next-auth on any origin', () => {
  it('signs out to the request origin on a port other than 3000 when NEXTAUTH_URL is unset', async () => {
    const a = await accounts.createAccount();
    const url = await signOutUrl(direct, await sessionFor(direct, a.email, a.password));
    expect(url).toBe(`${direct.url}/`);
  });

  it('behind a reverse proxy with TRUST_PROXY=1, signs out to the public origin the proxy names', async () => {
    const a = await accounts.createAccount();
    const url = await signOutUrl(proxied, await sessionFor(proxied, a.email, a.password), {
      'x-forwarded-host': 'gateway.example.test',
      'x-forwarded-proto': 'https',
    });
    expect(url).toBe('https://gateway.example.test/');
  });

  it('ignores X-Forwarded-Host without TRUST_PROXY, so a client cannot send people elsewhere', async () => {
    const a = await accounts.createAccount();
    const url = await signOutUrl(direct, await sessionFor(direct, a.email, a.password), { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect(url).toBe(`${direct.url}/`);
  });

  it('keeps a callback URL on its own site: another origin keeps only its path', async () => {
    const a = await accounts.createAccount();
    const session = await sessionFor(direct, a.email, a.password);
    const csrf = await fetch(`${direct.url}/api/auth/csrf`, { headers: { cookie: session } });
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const res = await fetch(`${direct.url}/api/auth/signout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [session, ...cookiesOf(csrf)].join('; ') },
      body: new URLSearchParams({ csrfToken, callbackUrl: 'https://evil.example/steal?x=1', json: 'true' }),
    });
    expect(((await res.json()) as { url: string }).url).toBe(`${direct.url}/steal?x=1`);
  });
});

describe('dashboard pages', () => {
  it('sends a signed-out deep link to login with the whole path as callbackUrl', async () => {
    const res = await fetch(`${direct.url}/dashboard/logs/req_abc?x=1`, { redirect: 'manual' });
    expect(res.status).toBeGreaterThanOrEqual(300);
    expect(res.status).toBeLessThan(400);
    const location = new URL(res.headers.get('location')!, direct.url);
    expect(location.pathname).toBe('/login');
    expect(location.searchParams.get('callbackUrl')).toBe('/dashboard/logs/req_abc?x=1');
  });

  it('skips /login and /register when signed in, honouring a same-site callbackUrl only', async () => {
    const a = await accounts.createAccount();
    const cookie = await sessionFor(direct, a.email, a.password);
    const go = async (path: string) => {
      const res = await fetch(`${direct.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      expect(res.status, path).toBeGreaterThanOrEqual(300);
      return new URL(res.headers.get('location')!, direct.url);
    };
    expect((await go('/login')).pathname).toBe('/dashboard');
    const deep = await go(`/login?callbackUrl=${encodeURIComponent('/dashboard/keys?tab=1')}`);
    expect(`${deep.pathname}${deep.search}`).toBe('/dashboard/keys?tab=1');
    const foreign = await go(`/login?callbackUrl=${encodeURIComponent('//evil.example/x')}`);
    expect(foreign.origin).toBe(direct.url);
    expect(foreign.pathname).toBe('/dashboard');
    expect((await go('/register')).pathname).toBe('/dashboard');
  });

  it('answers 404 with the dashboard page for a missing request id and an unknown dashboard path', async () => {
    const a = await accounts.createAccount();
    const cookie = await sessionFor(direct, a.email, a.password);
    for (const path of ['/dashboard/logs/req_does_not_exist', '/dashboard/no-such-page']) {
      const res = await fetch(`${direct.url}${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(404);
      // Next.js sends a 404 from a page as a shell that renders the not-found tree from its payload.
      const html = await res.text();
      expect(html).toContain('not-found');
      expect(html).toContain('account-email'); // inside the dashboard layout
    }
    const site = await fetch(`${direct.url}/no-such-page`);
    expect(site.status).toBe(404);
    expect(await site.text()).toContain('Page not found');
  });

  it('serves a favicon and links it from every page', async () => {
    const icon = await fetch(`${direct.url}/icon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    expect(await (await fetch(`${direct.url}/login`)).text()).toMatch(/<link rel="icon" href="\/icon\.svg/);
  });
});

describe('sign-up rule', () => {
  const register = (password: string) =>
    fetch(`${proxied.url}/api/auth/register`, {
      method: 'POST',
      // Its own client address per call (TRUST_PROXY=1), so the per-IP allowance is not shared.
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.31.${randomBytes(1)[0]}.${randomBytes(1)[0]}` },
      body: JSON.stringify({ email: `signup-${randomBytes(5).toString('hex')}@example.com`, password }),
    });

  it('refuses short and commonly used passwords with 400 and the message the form shows', async () => {
    const short = await register('short');
    expect(short.status).toBe(400);
    expect(((await short.json()) as { error: { message: string } }).error.message).toMatch(/at least 8/);
    const common = await register('Password123');
    expect(common.status).toBe(400);
    expect(((await common.json()) as { error: { message: string } }).error.message).toMatch(/commonly used/);
  });

  it('accepts a long password without digits or symbols (no composition rules)', async () => {
    expect((await register('correct horse battery staple')).status).toBe(201);
  });
});

describe('GET /api/usage with grouping', () => {
  let cookie = '';
  let keyA = '';
  let keyB = '';
  let userId = '';
  const day = (offset: number) => new Date(Date.UTC(2026, 9, 10 + offset, 12)).toISOString();

  beforeAll(async () => {
    const a = await accounts.createAccount();
    userId = a.userId;
    keyA = a.keyId;
    keyB = (await (await import('@/lib/accounts/queries')).createKey(a.userId, 'second key')).id;
    cookie = await sessionFor(direct, a.email, a.password);
    // Through the batch writer, as the gateway logs them: the report reads the daily rollup it keeps.
    const { enqueueLog, flushLogs } = await import('@/lib/billing/writer');
    const { usdToPico } = await import('@/lib/money');
    const row = (i: number, createdAt: string, apiKeyId: string, model: string, costUsd: string, outcome = 'ok') => ({
      id: `req_ux_${randomBytes(8).toString('hex')}_${i}`,
      createdAt: new Date(createdAt),
      userId,
      apiKeyId,
      endpoint: '/v1/chat/completions',
      modelRequested: model,
      modelServed: outcome === 'ok' ? model : null,
      channel: null,
      attempts: [],
      status: outcome === 'ok' ? 200 : 502,
      outcome,
      stream: false,
      promptTokens: 100,
      completionTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      tokensEstimated: false,
      costPico: usdToPico(costUsd),
      costCnyPico: usdToPico((Number(costUsd) * 7.2).toFixed(12)),
      cnyRate: '7.2',
      latencyMs: 50,
      firstTokenMs: null,
      errorCode: null,
      routeReason: null,
    });
    for (const r of [
      row(1, day(0), keyA, 'gpt-4o-mini', '0.0011'),
      row(2, day(0), keyB, 'deepseek-chat', '0.002'),
      row(3, day(1), keyA, 'gpt-4o-mini', '0.00001119'),
      row(4, day(1), keyA, 'gpt-4o-mini', '0', 'upstream_error'),
      row(5, day(5), keyB, 'deepseek-chat', '0.5'), // outside the range asked below
    ])
      enqueueLog(r);
    await flushLogs();
  });

  const get = (query: string) => fetch(`${direct.url}/api/usage${query}`, { headers: { cookie } });

  it('totals each day of the range, with the days without requests at zero', async () => {
    const res = await get('?from=2026-10-10&to=2026-10-12&group_by=day');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      days: { date: string; requests: number; failed: number; spend_usd: string }[];
      totals: { spend_usd: string; requests: number };
    };
    expect(body.days.map((d) => [d.date, d.requests, d.failed, d.spend_usd])).toEqual([
      ['2026-10-10', 2, 0, '0.0031'],
      ['2026-10-11', 2, 1, '0.00001119'],
      ['2026-10-12', 0, 0, '0'],
    ]);
    expect(body.totals).toMatchObject({ requests: 4, spend_usd: '0.00311119' });
  });

  it('breaks the range down by model and by key, highest spend first', async () => {
    const byModel = (await (await get('?from=2026-10-10&to=2026-10-11&group_by=model')).json()) as {
      groups: { key: string; requests: number; spend_usd: string }[];
    };
    expect(byModel.groups.map((g) => [g.key, g.requests, g.spend_usd])).toEqual([
      ['deepseek-chat', 1, '0.002'],
      ['gpt-4o-mini', 3, '0.00111119'],
    ]);
    const byKey = (await (await get('?from=2026-10-10&to=2026-10-11&group_by=key')).json()) as {
      groups: { key: string; label: string; requests: number }[];
      days: { date: string; groups: { key: string; requests: number }[] }[];
    };
    expect(byKey.groups.map((g) => [g.key, g.requests])).toEqual([
      [keyB, 1],
      [keyA, 3],
    ]);
    expect(byKey.groups[0].label).toMatch(/^second key \(/);
    expect(byKey.days[1].groups).toEqual([expect.objectContaining({ key: keyA, requests: 2 })]);
  });

  it('exports the same figures as CSV, money exact', async () => {
    const res = await fetch(`${direct.url}/api/usage/export?from=2026-10-10&to=2026-10-11&group_by=model`, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    const lines = (await res.text()).trim().split('\r\n');
    expect(lines[0]).toBe('date,group,group_label,requests,failed,prompt_tokens,completion_tokens,spend_usd,spend_cny');
    expect(lines).toContain('2026-10-11,gpt-4o-mini,gpt-4o-mini,2,1,200,20,0.00001119,0.000080568');
  });

  it('refuses bad ranges and groupings with 400, never 500', async () => {
    for (const q of [
      '?from=2026-13-01',
      '?from=2026-10-12&to=2026-10-10',
      '?from=2020-01-01&to=2026-01-01',
      '?group_by=colour',
      '?to=9999999',
      '?from=9999-12-31&to=9999-12-31',
    ]) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    }
  });

  it('answers 401 without a session', async () => {
    expect((await fetch(`${direct.url}/api/usage?group_by=model`)).status).toBe(401);
  });

  it('still answers the overview without grouping parameters', async () => {
    const body = (await (await get('')).json()) as { account: { email: string }; daily: unknown[] };
    expect(body.daily).toHaveLength(30);
  });
});

describe('account settings', () => {
  const mutate = (method: string, path: string, cookie: string, body?: unknown) =>
    fetch(`${direct.url}${path}`, {
      method,
      headers: { cookie, origin: direct.url, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const me = (cookie: string) => fetch(`${direct.url}/api/me`, { headers: { cookie } }).then((r) => r.status);

  it('changes the password only with the current one; other sessions end, this one continues', async () => {
    const a = await accounts.createAccount();
    const here = await sessionFor(direct, a.email, a.password);
    const elsewhere = await sessionFor(direct, a.email, a.password);
    const wrong = await mutate('POST', '/api/account/password', here, { current_password: 'not-my-password', new_password: 'a brand new passphrase' });
    expect(wrong.status).toBe(400);
    const weak = await mutate('POST', '/api/account/password', here, { current_password: a.password, new_password: 'password1' });
    expect(weak.status).toBe(400);
    expect(await me(elsewhere)).toBe(200);

    const ok = await mutate('POST', '/api/account/password', here, { current_password: a.password, new_password: 'a brand new passphrase' });
    expect(ok.status).toBe(200);
    const renewed = cookiesOf(ok).join('; ');
    expect(await me(renewed)).toBe(200);
    expect(await me(elsewhere)).toBe(401);
    const oldLogin = await fetch(`${direct.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: a.email, password: a.password }),
    });
    expect(oldLogin.status).toBe(401);
    await sessionFor(direct, a.email, 'a brand new passphrase');
  });

  it('signs out of every session at once, and a new login works afterwards', async () => {
    const a = await accounts.createAccount();
    const one = await sessionFor(direct, a.email, a.password);
    const two = await sessionFor(direct, a.email, a.password);
    expect((await mutate('POST', '/api/account/sign-out-everywhere', one)).status).toBe(200);
    expect(await me(one)).toBe(401);
    expect(await me(two)).toBe(401);
    const page = await fetch(`${direct.url}/dashboard`, { headers: { cookie: two }, redirect: 'manual' });
    expect(new URL(page.headers.get('location')!, direct.url).pathname).toBe('/login');
    await new Promise((r) => setTimeout(r, 5)); // a session signed in after the cut-off instant
    expect(await me(await sessionFor(direct, a.email, a.password))).toBe(200);
  });

  it('deletes an account with its password: keys refused, email freed, ledger kept', async () => {
    const a = await accounts.createAccount({ balanceUsd: '1' });
    const cookie = await sessionFor(direct, a.email, a.password);
    expect((await mutate('DELETE', '/api/account', cookie, { password: 'wrong-password-1' })).status).toBe(400);
    expect((await fetch(`${direct.url}/v1/models`, { headers: { authorization: `Bearer ${a.apiKey}` } })).status).toBe(200);

    const res = await mutate('DELETE', '/api/account', cookie, { password: a.password });
    expect(res.status).toBe(200);
    expect(await me(cookie)).toBe(401);
    const keyStatus = (await fetch(`${direct.url}/v1/models`, { headers: { authorization: `Bearer ${a.apiKey}` } })).status;
    expect([401, 403]).toContain(keyStatus);
    const login = await fetch(`${direct.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: a.email, password: a.password }),
    });
    expect(login.status).toBe(401);
    const user = await db.user.findUniqueOrThrow({ where: { id: a.userId } });
    expect(user.email).not.toContain(a.email.split('@')[0]);
    expect(user.deletedAt).not.toBeNull();
    expect(await db.ledgerEntry.count({ where: { userId: a.userId } })).toBeGreaterThan(0);
    // The address can sign up again.
    const again = await fetch(`${proxied.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.31.99.1' },
      body: JSON.stringify({ email: a.email, password: 'correct horse battery staple' }),
    });
    expect(again.status).toBe(201);
  });

  it('refuses settings changes from another site (CSRF guard)', async () => {
    const a = await accounts.createAccount();
    const cookie = await sessionFor(direct, a.email, a.password);
    const res = await fetch(`${direct.url}/api/account/sign-out-everywhere`, { method: 'POST', headers: { cookie, origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect(await me(cookie)).toBe(200);
  });
});
