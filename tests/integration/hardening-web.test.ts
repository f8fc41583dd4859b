// Hardening of the dashboard and account API (#26, items 13-16 and 18), against the built server
// (`node dist/server.mjs`) and the real PostgreSQL/Redis:
//   13 malformed filters, cursors and ids are 400 with a JSON error, never 500; the CSV export
//      checks them before its first byte;
//   14 CSRF: state-changing cookie requests need a same-origin Origin (or Referer), scheme and port
//      included; X-Forwarded-* count only with TRUST_PROXY=1;
//   15 the session cookie login sets is the one next-auth reads, behind a TLS proxy too;
//   16 a suspended account reads its data but changes nothing; login tells "suspended" only to
//      the right password, in the JSON API and in the browser sign-in;
//   18 failed logins are throttled per account (10 per 15 min), the same for unknown emails.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';

type Accounts = typeof import('../support/accounts');
type Db = Awaited<ReturnType<typeof import('@/lib/db').getDb>>;

let accounts: Accounts;
let db: Db;
let fake: FakeUpstream;
let gw: RunningGateway; // no TRUST_PROXY, no public URL
let proxied: RunningGateway; // TRUST_PROXY=1, NEXTAUTH_URL https (behind a TLS-terminating proxy)
const PUBLIC_URL = 'https://gateway.example.test';
// Per-IP login/registration limits out of the way: these tests make many logins from 127.0.0.1.
const roomyLimits = { limits: { login_per_ip_per_minute: 10_000, register_per_ip_per_minute: 10_000 } };

beforeAll(async () => {
  accounts = await import('../support/accounts');
  db = await (await import('@/lib/db')).getDb();
  fake = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [fake.url], overrides: roomyLimits });
  [gw, proxied] = await Promise.all([startGateway({ config }), startGateway({ config, env: { TRUST_PROXY: '1', NEXTAUTH_URL: PUBLIC_URL } })]);
});

afterAll(async () => {
  await Promise.all([gw, proxied].filter(Boolean).map((g) => g.stop('SIGKILL')));
  await fake?.close();
  await (await import('@/lib/limits/runtime')).getLimiter().close();
  await db?.$disconnect();
});

interface Call {
  method?: string;
  body?: unknown;
  cookie?: string;
  headers?: Record<string, string>;
  on?: RunningGateway;
}

function call(path: string, init: Call = {}) {
  const target = init.on ?? gw;
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.cookie) headers.cookie = init.cookie;
  return fetch(`${target.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    redirect: 'manual',
  });
}

/** Logs in through POST /api/auth/login; the session cookie as name=value. */
async function login(email: string, password: string, init: Call = {}) {
  const res = await call('/api/auth/login', { ...init, body: { email, password } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

async function signedIn(on: RunningGateway = gw) {
  const a = await accounts.createAccount({ tier: 'pro', balanceUsd: '5' });
  return { ...a, cookie: await login(a.email, a.password, { on }) };
}

async function expectJsonError(res: Response, status: number, code: string, label = '') {
  const text = await res.text();
  expect(res.status, `${label} ${text}`).toBe(status);
  expect(res.headers.get('content-type'), label).toMatch(/application\/json/);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(body.error.code, label).toBe(code);
  expect(body.error.message.length, label).toBeGreaterThan(5);
  return body.error;
}

const b64 = (text: string) => Buffer.from(text).toString('base64url');

describe('13: malformed dashboard filters, cursors and ids', () => {
  it('GET /api/logs answers 400 with a JSON error (naming the parameter) to NUL bytes, out-of-range years and garbage cursors', async () => {
    const { cookie } = await signedIn();
    const cases: [string, string][] = [
      ['model=gpt%004o', 'model'],
      ['from=-271821-04-20T00:00:00.000Z', 'from'],
      ['to=%2B275760-09-13T00:00:00.000Z', 'to'],
      ['to=9999-12-31', ''], // the whole last day of 9999 is fine: 200 below
      ['from=9999-99-99', 'from'],
      ['from=9999-99-99T99:99:99Z', 'from'],
      ['from=2026-02-30', 'from'],
      ['from=2026-03-01T00:00:00%00', 'from'],
      [`starting_after=${b64('999999999999999:req_x')}`, 'starting_after'],
      [`starting_after=${b64('1700000000000:req\u0000x')}`, 'starting_after'],
      [`ending_before=${b64('-8640000000000000:x')}`, 'ending_before'],
      ['starting_after=%00%01garbage', 'starting_after'],
      ['ending_before=!!!', 'ending_before'],
    ];
    for (const [query, param] of cases) {
      const res = await call(`/api/logs?${query}`, { cookie });
      if (!param) {
        expect(res.status, query).toBe(200);
        continue;
      }
      const error = await expectJsonError(res, 400, 'invalid_request', query);
      expect(error.message, query).toContain(param);
    }
  });

  it('GET /api/logs/:id with a NUL byte is 400; an unknown id stays 404', async () => {
    const { cookie } = await signedIn();
    await expectJsonError(await call('/api/logs/req%00x', { cookie }), 400, 'invalid_request');
    await expectJsonError(await call('/api/logs/req_nonexistent', { cookie }), 404, 'not_found');
  });

  it('GET /api/ledger answers 400 to a cursor whose time is not a real instant or is garbage', async () => {
    const { cookie } = await signedIn();
    for (const before of [b64('9999-99-99T00:00:00.000Z|e:1'), b64('2026-02-30T00:00:00.000Z|e:1'), b64('\u0000'), '%00', '....']) {
      const error = await expectJsonError(await call(`/api/ledger?before=${before}`, { cookie }), 400, 'invalid_request', before);
      expect(error.message).toContain('before');
    }
    expect((await call(`/api/ledger?before=${b64('2026-03-01T00:00:00.000Z|e:1')}`, { cookie })).status).toBe(200);
  });

  it('GET /api/usage ignores parameters it does not know and answers a malformed range with 400, never 500', async () => {
    const { cookie } = await signedIn();
    expect((await call('/api/usage?cursor=-271821', { cookie })).status).toBe(200);
    for (const from of ['%00', '-271821-01-01', '9999-99-99', '2026-02-30']) {
      const error = await expectJsonError(await call(`/api/usage?from=${from}`, { cookie }), 400, 'invalid_request', from);
      expect(error.message).toContain('from');
    }
  });

  it('GET /api/logs/export checks the filters before the first byte: a 400 JSON error, not a CSV cut after its header', async () => {
    const { cookie } = await signedIn();
    for (const query of ['model=a%00b', 'from=-271821-04-20T00:00:00.000Z', 'to=%2B275760-09-13T00:00:00.000Z', 'from=9999-99-99']) {
      const res = await call(`/api/logs/export?${query}`, { cookie });
      expect(res.headers.get('content-disposition'), query).toBeNull();
      await expectJsonError(res, 400, 'invalid_request', query);
    }
    const ok = await call('/api/logs/export?to=9999-12-31', { cookie });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/^id,created_at,/);
  });
});

describe('14: CSRF guard', () => {
  const createKey = (cookie: string, headers: Record<string, string>, on: RunningGateway = gw) =>
    call('/api/keys', { cookie, headers, body: { name: 'csrf' }, on });

  it('refuses a cookie-authenticated POST with neither Origin nor Referer, and one from our host over another scheme or port', async () => {
    const { cookie, userId } = await signedIn();
    const count = () => db.apiKey.count({ where: { userId } });
    const before = await count();
    const host = new URL(gw.url).host;
    const refused: Record<string, string>[] = [
      {},
      { origin: `https://${host}` },
      { origin: `http://${host.replace(/:\d+$/, ':1')}` },
      { referer: `https://${host}/dashboard` },
      { origin: 'null' },
    ];
    for (const headers of refused) {
      await expectJsonError(await createKey(cookie, headers), 403, 'forbidden', JSON.stringify(headers));
    }
    await expectJsonError(await call('/api/keys/00000000-0000-0000-0000-000000000000', { method: 'DELETE', cookie }), 403, 'forbidden');
    expect(await count()).toBe(before);
    // Our own origin, or (with no Origin) a Referer from our own pages, is accepted.
    expect((await createKey(cookie, { origin: gw.url })).status).toBe(201);
    expect((await createKey(cookie, { referer: `${gw.url}/dashboard/keys` })).status).toBe(201);
    expect(await count()).toBe(before + 2);
  });

  it('ignores X-Forwarded-Host/-Proto without TRUST_PROXY, and honours them with it', async () => {
    const { cookie } = await signedIn();
    const forwarded = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', origin: 'https://evil.example' };
    await expectJsonError(await createKey(cookie, forwarded), 403, 'forbidden');

    const behindProxy = await signedIn(proxied);
    const viaProxy = { 'x-forwarded-host': 'gw.proxy.example', 'x-forwarded-proto': 'https' };
    expect((await createKey(behindProxy.cookie, { ...viaProxy, origin: 'https://gw.proxy.example' }, proxied)).status).toBe(201);
    expect((await createKey(behindProxy.cookie, { origin: PUBLIC_URL }, proxied)).status).toBe(201); // NEXTAUTH_URL
    await expectJsonError(await createKey(behindProxy.cookie, { ...viaProxy, origin: 'http://gw.proxy.example' }, proxied), 403, 'forbidden');
  });

  it('refuses a login posted from a foreign Origin (login CSRF), and accepts one without any (API clients)', async () => {
    const a = await accounts.createAccount();
    await expectJsonError(
      await call('/api/auth/login', { body: { email: a.email, password: a.password }, headers: { origin: 'https://evil.example' } }),
      403,
      'forbidden',
    );
    expect((await call('/api/auth/login', { body: { email: a.email, password: a.password } })).status).toBe(200);
  });
});

describe('15: one session cookie for login and next-auth', () => {
  it('behind a TLS-terminating proxy (X-Forwarded-Proto: https, no NEXTAUTH_URL) the login cookie keeps the user signed in', async () => {
    const a = await accounts.createAccount();
    const cookie = await login(a.email, a.password, { headers: { 'x-forwarded-proto': 'https' } });
    const me = await call('/api/me', { cookie, headers: { 'x-forwarded-proto': 'https' } });
    expect(me.status, await me.clone().text()).toBe(200);
    expect(((await me.json()) as { user: { id: string } }).user.id).toBe(a.userId);
  });

  it('with an https NEXTAUTH_URL, login and registration set the __Secure- cookie next-auth reads', async () => {
    const a = await accounts.createAccount();
    const res = await call('/api/auth/login', { on: proxied, body: { email: a.email, password: a.password } });
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^__Secure-next-auth\.session-token=/);
    expect(setCookie).toMatch(/; Secure/);
    const me = await call('/api/me', { on: proxied, cookie: setCookie.split(';')[0] });
    expect(me.status, await me.clone().text()).toBe(200);

    const reg = await call('/api/auth/register', { on: proxied, body: { email: `reg-${Date.now()}@example.com`, password: 'register-pass-1' } });
    expect(reg.status).toBe(201);
    const regCookie = (reg.headers.get('set-cookie') ?? '').split(';')[0];
    expect(regCookie).toMatch(/^__Secure-next-auth\.session-token=/);
    expect((await call('/api/me', { on: proxied, cookie: regCookie })).status).toBe(200);
  });
});

describe('16: suspended accounts', () => {
  it('keep reading their own data but cannot create keys or recharge (403 account_suspended)', async () => {
    const a = await signedIn();
    const { setStatus } = await import('@/lib/accounts/queries');
    await setStatus(a.userId, 'suspended');
    const own = { origin: gw.url };
    const created = await expectJsonError(await call('/api/keys', { cookie: a.cookie, headers: own, body: { name: 'after' } }), 403, 'account_suspended');
    expect(created.message).toMatch(/suspended/);
    await expectJsonError(await call('/api/payment/recharge', { cookie: a.cookie, headers: own, body: { amount_usd: 20 } }), 403, 'account_suspended');
    await expectJsonError(await call(`/api/keys/${a.keyId}`, { method: 'DELETE', cookie: a.cookie, headers: own }), 403, 'account_suspended');
    expect(await db.apiKey.count({ where: { userId: a.userId } })).toBe(1);
    for (const path of ['/api/me', '/api/keys', '/api/logs', '/api/ledger', '/api/usage']) {
      expect((await call(path, { cookie: a.cookie })).status, path).toBe(200);
    }
    await setStatus(a.userId, 'active');
    expect((await call('/api/keys', { cookie: a.cookie, headers: own, body: { name: 'again' } })).status).toBe(201);
  });

  it('login: a wrong password gets the generic answer, only the right one hears "suspended"; the browser sign-in gets no session', async () => {
    const a = await accounts.createAccount();
    const { setStatus } = await import('@/lib/accounts/queries');
    await setStatus(a.userId, 'suspended');
    const wrong = await call('/api/auth/login', { body: { email: a.email, password: 'wrong-password-1' } });
    const unknown = await call('/api/auth/login', { body: { email: `nobody-${Date.now()}@example.com`, password: 'wrong-password-1' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toBe(await unknown.text());
    const right = await call('/api/auth/login', { body: { email: a.email, password: a.password } });
    await expectJsonError(right, 403, 'account_suspended');
    expect(right.headers.get('set-cookie')).toBeNull();

    // next-auth's own credentials sign-in (what the login page uses): no session for the suspended
    // account, one for an active account (the control that shows the check can see a session).
    const browserSignIn = async (email: string, password: string) => {
      const csrf = await call('/api/auth/csrf');
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      const csrfCookie = csrf.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const res = await fetch(`${gw.url}/api/auth/callback/credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
        body: new URLSearchParams({ csrfToken, email, password, json: 'true' }),
        redirect: 'manual',
      });
      return res.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c));
    };
    expect(await browserSignIn(a.email, a.password)).toBe(false);
    const active = await accounts.createAccount();
    expect(await browserSignIn(active.email, active.password)).toBe(true);
  });
});

describe('18: per-account login throttle', () => {
  it('after 10 failed logins for one account the 11th is 429 with Retry-After, even with the right password; other accounts are unaffected', async () => {
    const a = await accounts.createAccount();
    const other = await accounts.createAccount();
    for (let i = 0; i < 10; i++) {
      // The per-IP limit is raised in this file: it is not what stops them.
      expect((await call('/api/auth/login', { body: { email: a.email, password: `wrong-${i}-password` } })).status).toBe(401);
    }
    const locked = await call('/api/auth/login', { body: { email: a.email, password: a.password } });
    const error = await expectJsonError(locked, 429, 'rate_limit_exceeded');
    expect(error.message).toMatch(/sign-in attempts/);
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(locked.headers.get('set-cookie')).toBeNull();
    // The email is matched as the account is: case and spaces do not make a fresh budget.
    expect((await call('/api/auth/login', { body: { email: ` ${a.email.toUpperCase()} `, password: a.password } })).status).toBe(429);
    expect((await call('/api/auth/login', { body: { email: other.email, password: other.password } })).status).toBe(200);
  });

  it('an unknown email is throttled exactly like a known one (nothing tells whether the account exists)', async () => {
    const known = await accounts.createAccount();
    const unknownEmail = `nobody-${Date.now()}@example.com`;
    const answers = async (email: string) => {
      const out: string[] = [];
      for (let i = 0; i < 11; i++) {
        const res = await call('/api/auth/login', { body: { email, password: `wrong-${i}-password` } });
        out.push(`${res.status} ${((await res.json()) as { error: { code: string } }).error.code}`);
      }
      return out;
    };
    const [k, u] = [await answers(known.email), await answers(unknownEmail)];
    expect(k).toEqual(u);
    expect(k.slice(0, 10).every((s) => s === '401 unauthenticated')).toBe(true);
    expect(k[10]).toBe('429 rate_limit_exceeded');
  });

  it('successful logins do not use up the budget', async () => {
    const a = await accounts.createAccount();
    for (let i = 0; i < 12; i++) expect((await call('/api/auth/login', { body: { email: a.email, password: a.password } })).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await call('/api/auth/login', { body: { email: a.email, password: 'wrong-password-9' } })).status).toBe(401);
    expect((await call('/api/auth/login', { body: { email: a.email, password: a.password } })).status).toBe(200);
  });
});

describe('#37 item 22: sign-in throttle per account and address; one form of an email', () => {
  // TRUST_PROXY=1: the address is the one the proxy forwards (a single X-Forwarded-For entry here).
  const from = (ip: string, body: unknown) => call('/api/auth/login', { on: proxied, body, headers: { 'x-forwarded-for': ip } });

  it("ten wrong passwords from one address throttle that address on that account, not the owner's sign-in from elsewhere", async () => {
    const a = await accounts.createAccount();
    for (let i = 0; i < 10; i++) expect((await from('203.0.113.7', { email: a.email, password: `wrong-${i}-password` })).status).toBe(401);
    await expectJsonError(await from('203.0.113.7', { email: a.email, password: a.password }), 429, 'rate_limit_exceeded');
    // The same mailbox written another way is the same budget.
    expect((await from('203.0.113.7', { email: `${a.email.toUpperCase()}.`, password: a.password })).status).toBe(429);
    expect((await from('198.51.100.9', { email: a.email, password: a.password })).status).toBe(200);
  });

  it('one address spreading wrong passwords over many accounts is stopped across them', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 51; i++)
      statuses.push((await from('203.0.113.99', { email: `spray-${i}-${Date.now()}@example.com`, password: 'wrong-password-1' })).status);
    expect(statuses.slice(0, 50).every((s) => s === 401)).toBe(true);
    expect(statuses[50]).toBe(429);
    const a = await accounts.createAccount();
    expect((await from('198.51.100.10', { email: a.email, password: a.password })).status).toBe(200);
  });

  it('`alice@x.test.` is `alice@x.test`: registering it again is a conflict, and it signs in to the same account; a malformed email is a 400', async () => {
    const email = `alice-${Date.now()}@x.test`;
    const reg = await call('/api/auth/register', { body: { email, password: 'register-pass-1' } });
    expect(reg.status).toBe(201);
    const id = ((await reg.json()) as { user: { id: string } }).user.id;
    for (const variant of [`${email}.`, ` ${email.toUpperCase()} `, `${email}..`]) {
      await expectJsonError(await call('/api/auth/register', { body: { email: variant, password: 'register-pass-1' } }), 409, 'conflict', variant);
      const login = await call('/api/auth/login', { body: { email: variant, password: 'register-pass-1' } });
      expect(login.status, variant).toBe(200);
      expect(((await login.json()) as { user: { id: string } }).user.id).toBe(id);
    }
    for (const bad of ['a@x..test', 'a\u0000@x.test']) {
      const err = await expectJsonError(await call('/api/auth/register', { body: { email: bad, password: 'register-pass-1' } }), 400, 'invalid_request', bad);
      expect(err.message).toMatch(/email/i);
      await expectJsonError(await call('/api/auth/login', { body: { email: bad, password: 'register-pass-1' } }), 400, 'invalid_request', bad);
    }
  });
});
