// Security properties of the production server (`node dist/server.mjs`: the lean /v1 path plus the
// Next.js pages and /api routes), against the real PostgreSQL:
//   - API keys are stored only as hashes; upstream secrets encrypted at rest (AES-GCM, SECRETS_KEY);
//     passwords as bcrypt hashes;
//   - login failures do not tell an unknown email from a wrong password;
//   - cookie-authenticated mutations refuse a foreign Origin (CSRF); session routes only reach the
//     caller's own data;
//   - security headers on pages;
//   - no request field or header can point the gateway at another upstream (SSRF);
//   - nothing secret (API keys, upstream secrets, passwords) reaches the logs.
//
// lib/env.ts parses process.env once, on first import: SECRETS_KEY (the one the gateway gets from
// tests/support/gateway.ts) is set here first and every app module is imported dynamically.

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';

const SECRETS_KEY = 'a'.repeat(64);
process.env.SECRETS_KEY = SECRETS_KEY;

type Accounts = typeof import('../support/accounts');
type Db = Awaited<ReturnType<typeof import('@/lib/db').getDb>>;

let accounts: Accounts;
let db: Db;
let decryptSecret: (s: string) => string;
let fake: FakeUpstream;
let trap: FakeUpstream; // must never be called
let gw: RunningGateway;
const gateways: RunningGateway[] = [];
/** Every API key and password this file handles: none may appear in logs or in the database. */
const keys: string[] = [];
const passwords: string[] = [];

beforeAll(async () => {
  accounts = await import('../support/accounts');
  db = await (await import('@/lib/db')).getDb();
  decryptSecret = (await import('@/lib/crypto')).decryptSecret;
  fake = await startFakeUpstream();
  trap = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url] }), env: { LOG_LEVEL: 'debug' } });
  gateways.push(gw);
  // The account endpoints are limited per IP (register 3, login 10 a minute), and every test file
  // of a run comes from 127.0.0.1: start this file with fresh per-IP windows.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const stale = await redis.keys('gw:ip:*');
  if (stale.length) await redis.del(...stale);
  redis.disconnect();
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
  await fake?.close();
  await trap?.close();
  await (await import('@/lib/limits/runtime')).getLimiter().close();
  await db?.$disconnect();
});

async function api(path: string, init: { method?: string; body?: unknown; cookie?: string; origin?: string | null } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.cookie) headers.cookie = init.cookie;
  if (init.origin) headers.origin = init.origin;
  return fetch(`${gw.url}${path}`, {
    method: init.method ?? 'POST',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    redirect: 'manual',
  });
}

/** Registers through POST /api/auth/register; returns the session cookie (name=value). */
async function register(email: string, password: string) {
  passwords.push(password);
  const res = await api('/api/auth/register', { body: { email, password } });
  expect(res.status, await res.clone().text()).toBe(201);
  const setCookie = res.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Lax/i);
  const user = ((await res.json()) as { user: { id: string; email: string } }).user;
  return { cookie: setCookie.split(';')[0], userId: user.id };
}

const chat = (apiKey: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'security' }], ...body }),
  });

/** All rows of a table as JSON text (every column, whatever its name). */
async function tableText(table: string): Promise<string> {
  const rows = await db.$queryRawUnsafe<{ j: string }[]>(`SELECT row_to_json(t)::text AS j FROM "${table}" t`);
  return rows.map((r) => r.j).join('\n');
}

describe('secrets at rest', () => {
  it('API keys are stored only as SHA-256 hashes', async () => {
    const a = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
    keys.push(a.apiKey);
    passwords.push(a.password);
    expect(a.apiKey).toMatch(/^sk-gw-[0-9A-Za-z]{43}$/);
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: a.keyId } });
    expect(row.hash).toBe(createHash('sha256').update(a.apiKey).digest('hex'));
    const secretPart = a.apiKey.slice('sk-gw-'.length);
    const text = await tableText('ApiKey');
    expect(text).toContain(a.keyId);
    expect(text).not.toContain(a.apiKey);
    expect(text).not.toContain(secretPart);
    expect(text).not.toContain(secretPart.slice(0, 20)); // prefix and last four only
    // The key works: it is the hash that is looked up.
    const res = await chat(a.apiKey);
    expect(res.status).toBe(200);
  });

  it('upstream secrets are encrypted with SECRETS_KEY (AES-256-GCM) and decrypt to the configured key', async () => {
    const rows = await db.channel.findMany({ orderBy: { id: 'asc' } });
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId['openai-1']).toBeDefined();
    expect(byId['anthropic-1']).toBeDefined();
    expect(await tableText('Channel')).not.toContain('upstream-secret-');
    expect(byId['openai-1'].secretEncrypted).toMatch(/^v1\./);
    expect(decryptSecret(byId['openai-1'].secretEncrypted)).toBe('upstream-secret-openai-1');
    expect(decryptSecret(byId['anthropic-1'].secretEncrypted)).toBe('upstream-secret-anthropic-1');
    // Tampering is detected (GCM tag).
    const [v, iv, tag, data] = byId['openai-1'].secretEncrypted.split('.');
    const flipped = Buffer.from(data, 'base64url');
    flipped[0] ^= 1;
    expect(() => decryptSecret([v, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
  });

  it('passwords are stored as bcrypt hashes', async () => {
    const email = `sec-${Date.now()}@example.com`;
    const password = 'Sup3r-secret-pass-phrase';
    const { userId } = await register(email, password);
    const user = await db.user.findUniqueOrThrow({ where: { id: userId } });
    expect(user.passwordHash).toMatch(/^\$2[aby]\$\d{2}\$/);
    expect(user.passwordHash).not.toContain(password);
    expect(await tableText('User')).not.toContain(password);
  });
});

describe('login', () => {
  it('an unknown email and a wrong password get the same status and the same body', async () => {
    const a = await accounts.createAccount({ tier: 'free' });
    passwords.push(a.password);
    const wrong = await api('/api/auth/login', { body: { email: a.email, password: 'not-the-password-1' } });
    const unknown = await api('/api/auth/login', { body: { email: `nobody-${Date.now()}@example.com`, password: 'not-the-password-1' } });
    const [wrongText, unknownText] = [await wrong.text(), await unknown.text()];
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(wrong.status);
    expect(unknownText).toBe(wrongText);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const right = await api('/api/auth/login', { body: { email: a.email, password: a.password } });
    expect(right.status).toBe(200);
    expect(right.headers.get('set-cookie')).toMatch(/next-auth\.session-token=/);
  });

  it('an unknown email takes as long to refuse as a wrong password (a real password check either way)', async () => {
    const a = await accounts.createAccount({ tier: 'free' });
    passwords.push(a.password);
    const timed = async (email: string) => {
      const t = performance.now();
      const res = await api('/api/auth/login', { body: { email, password: 'not-the-password-1' } });
      expect(res.status).toBe(401);
      return performance.now() - t;
    };
    // Two of each, interleaved (the login limit is 10 a minute per IP; this file uses 9 in all).
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 2; i++) {
      wrong.push(await timed(a.email));
      unknown.push(await timed(`nobody-${i}-${Date.now()}@example.com`));
    }
    // Without a password check for unknown accounts the refusal would take a few ms against the
    // tens of ms of bcrypt; with one, the fastest of each are within a factor of two of each other
    // (the fastest: a pause of the busy machine only ever adds time).
    const ratio = Math.min(...unknown) / Math.min(...wrong);
    expect(ratio, `wrong ${wrong.map(Math.round)} ms, unknown ${unknown.map(Math.round)} ms`).toBeGreaterThan(0.5);
    expect(ratio, `wrong ${wrong.map(Math.round)} ms, unknown ${unknown.map(Math.round)} ms`).toBeLessThan(2);
  });
});

describe('session routes', () => {
  let mine: { cookie: string; userId: string };
  let other: Awaited<ReturnType<Accounts['createAccount']>>;
  beforeAll(async () => {
    mine = await register(`csrf-${Date.now()}@example.com`, 'csrf-pass-phrase-1');
    other = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
    keys.push(other.apiKey);
    passwords.push(other.password);
  });

  it('POST /api/keys with the session cookie: 403 from a foreign Origin, 201 from our own', async () => {
    const count = () => db.apiKey.count({ where: { userId: mine.userId } });
    const before = await count();
    for (const origin of ['https://evil.example', 'null', `${gw.url}.evil.example`, 'http://127.0.0.1:1']) {
      const res = await api('/api/keys', { cookie: mine.cookie, origin, body: { name: 'evil' } });
      expect(res.status, origin).toBe(403);
      const body = (await res.json()) as { error: { code: string } };
      expect(body.error.code).toBe('forbidden');
    }
    expect(await count()).toBe(before);

    const res = await api('/api/keys', { cookie: mine.cookie, origin: gw.url, body: { name: 'mine' } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; key: string };
    keys.push(created.key);
    expect(await count()).toBe(before + 1);
    // The key is shown once; the listing never has it again.
    const list = await api('/api/keys', { method: 'GET', cookie: mine.cookie });
    expect(list.status).toBe(200);
    const listText = await list.text();
    expect(listText).toContain(created.id);
    expect(listText).not.toContain(created.key);
    // Revoking also refuses a foreign Origin.
    const revoke = await api(`/api/keys/${created.id}`, { method: 'DELETE', cookie: mine.cookie, origin: 'https://evil.example' });
    expect(revoke.status).toBe(403);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).revokedAt).toBeNull();
  });

  it("another account's key and log are 404, never listed, and stay untouched", async () => {
    const del = await api(`/api/keys/${other.keyId}`, { method: 'DELETE', cookie: mine.cookie, origin: gw.url });
    expect(del.status).toBe(404);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: other.keyId } })).revokedAt).toBeNull();
    const list = await (await api('/api/keys', { method: 'GET', cookie: mine.cookie })).text();
    expect(list).not.toContain(other.keyId);

    const res = await chat(other.apiKey);
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    await accounts.waitFor(() => db.requestLog.findFirst({ where: { id: requestId } }));
    const log = await api(`/api/logs/${requestId}`, { method: 'GET', cookie: mine.cookie });
    expect(log.status).toBe(404);
    const logs = await (await api('/api/logs', { method: 'GET', cookie: mine.cookie })).text();
    expect(logs).not.toContain(requestId);
    // Without a session: 401.
    expect((await api('/api/keys', { method: 'GET' })).status).toBe(401);
    expect((await api(`/api/keys/${other.keyId}`, { method: 'DELETE', origin: gw.url })).status).toBe(401);
  });
});

describe('pages', () => {
  it('carry the security headers', async () => {
    for (const path of ['/', '/login']) {
      const res = await fetch(`${gw.url}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBeLessThan(500);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });
});

describe('no SSRF', () => {
  it('no body field or header redirects a request to another upstream', async () => {
    const a = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
    keys.push(a.apiKey);
    passwords.push(a.password);
    const elsewhere = `${trap.url}/v1`;
    const fields = {
      base_url: elsewhere,
      api_base: elsewhere,
      baseURL: elsewhere,
      url: elsewhere,
      endpoint: elsewhere,
      upstream: elsewhere,
      channel: 'trap',
    };
    const headers = {
      'x-upstream-url': elsewhere,
      'x-base-url': elsewhere,
      'x-forwarded-host': new URL(trap.url).host,
      forwarded: `host=${new URL(trap.url).host}`,
    };
    const before = fake.requests.length;

    const r1 = await chat(a.apiKey, fields, headers);
    expect(r1.status).toBe(200);
    const r2 = await chat(a.apiKey, { ...fields, stream: true }, headers);
    expect(r2.status).toBe(200);
    await r2.text();
    const r3 = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'ssrf', ...fields }),
    });
    expect(r3.status).toBe(200);
    const r4 = await fetch(`${gw.url}/v1/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'ssrf' }], ...fields }),
    });
    expect(r4.status).toBeLessThan(500);
    // A URL as the service region is no region name: refused (400), never a place to send the request.
    const r5 = await chat(a.apiKey, { service: { region: elsewhere } }, { 'x-service-region': 'eu' });
    expect(r5.status).toBe(400);
    const r6 = await chat(a.apiKey, {}, { 'x-service-region': elsewhere });
    expect(r6.status).toBe(400);

    expect(trap.requests).toHaveLength(0);
    expect(fake.requests.length - before).toBeGreaterThanOrEqual(3);
    // The upstream only ever sees the operator's secret, never the caller's key.
    for (const r of fake.requests.slice(before)) {
      const auth = String(r.headers.authorization ?? r.headers['x-api-key'] ?? '');
      expect(auth).toMatch(/upstream-secret-/);
      expect(JSON.stringify(r.headers)).not.toContain(a.apiKey);
    }
  });
});

describe('suspension and revocation', () => {
  // Instances drop their cached copy of an account on a pub/sub message, which can arrive after the
  // instance's next request. The operations therefore also leave a deny marker in Redis that the
  // admission itself checks: these tests leave the message out entirely.
  it('hold on the very next request when the invalidation message never arrives, and after', async () => {
    const { accountDenyKey, keyDenyKey } = await import('@/lib/events');
    const { hashApiKey } = await import('@/lib/keys/api-key');
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const models = (key: string) => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    const counted = (key: string) =>
      fetch(`${gw.url}/v1/anthropic/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'count' }] }),
      });
    // Every entry point, each met with the caller still cached (a refusal drops the cached copy).
    const calls: [string, (key: string) => Promise<Response>][] = [
      ['chat', (key) => chat(key)],
      ['chat stream', (key) => chat(key, { stream: true })],
      ['models', models],
      ['count_tokens', counted],
    ];
    try {
      for (const [name, call] of calls) {
        const a = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
        const b = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
        keys.push(a.apiKey, b.apiKey);
        passwords.push(a.password, b.password);
        expect((await chat(a.apiKey)).status).toBe(200); // both cached by the gateway now
        expect((await chat(b.apiKey)).status).toBe(200);
        const before = fake.requests.length;

        // What suspending and revoking do, minus the message: the database row, then the marker.
        await db.user.update({ where: { id: a.userId }, data: { status: 'suspended' } });
        await redis.set(accountDenyKey(a.userId), '1', 'PX', 60_000);
        await db.apiKey.update({ where: { id: b.keyId }, data: { revokedAt: new Date() } });
        await redis.set(keyDenyKey(hashApiKey(b.apiKey)), '1', 'PX', 60_000);

        // First the marker refuses; then the row reloaded from the database does, marker or not.
        for (const dropMarkers of [false, true]) {
          if (dropMarkers) await redis.del(accountDenyKey(a.userId), keyDenyKey(hashApiKey(b.apiKey)));
          const ra = await call(a.apiKey);
          expect(ra.status, name).toBe(403);
          expect(JSON.stringify(await ra.json()), name).toContain('suspended');
          const rb = await call(b.apiKey);
          expect(rb.status, name).toBe(401);
        }
        // A call with ample room may have gone upstream speculatively while its admission was on its
        // way (a stream; a non-streaming call too on a quiet instance, as here): that call is
        // cancelled when the admission is refused, and never repeated (the refusal dropped the
        // cached copy; the reloaded one is refused before any upstream call).
        expect(fake.requests.length - before, name).toBeLessThanOrEqual(name.startsWith('chat') ? 2 : 0);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('suspending and revoking leave the marker, with an expiry; reactivating clears it', async () => {
    const { accountDenyKey, keyDenyKey } = await import('@/lib/events');
    const { setStatus, revokeKey } = await import('@/lib/accounts/queries');
    const { hashApiKey } = await import('@/lib/keys/api-key');
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const a = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
      keys.push(a.apiKey);
      passwords.push(a.password);
      const [userMarker, keyMarker] = [accountDenyKey(a.userId), keyDenyKey(hashApiKey(a.apiKey))];
      expect((await chat(a.apiKey)).status).toBe(200);

      await setStatus(a.userId, 'suspended');
      const ttl = await redis.pttl(userMarker);
      expect(ttl).toBeGreaterThan(3_600_000); // outlives any cached copy (AUTH_CACHE_TTL_S <= 1 h)
      expect(ttl).toBeLessThanOrEqual(7_200_000);
      expect((await chat(a.apiKey)).status).toBe(403);

      await setStatus(a.userId, 'active');
      expect(await redis.exists(userMarker)).toBe(0);
      expect((await chat(a.apiKey)).status).toBe(200);

      await revokeKey(a.userId, a.keyId);
      expect(await redis.pttl(keyMarker)).toBeGreaterThan(3_600_000);
      expect((await chat(a.apiKey)).status).toBe(401);
    } finally {
      redis.disconnect();
    }
  });
});

describe('logs', () => {
  it('no API key, upstream secret or password in anything the gateway printed', async () => {
    const a = await accounts.createAccount({ tier: 'pro', balanceUsd: '1' });
    keys.push(a.apiKey);
    passwords.push(a.password);
    // Traffic that exercises the logging paths: success, stream, wrong keys, upstream failures,
    // a mid-stream failure, a key in the body, logins with passwords.
    expect((await chat(a.apiKey)).status).toBe(200);
    await (await chat(a.apiKey, { stream: true })).text();
    const forged = `sk-gw-${'Z'.repeat(43)}`;
    keys.push(forged);
    expect((await chat(forged)).status).toBe(401);
    expect((await chat(`${a.apiKey}x`)).status).toBe(401);
    expect((await chat(a.apiKey, {}, { authorization: `Basic ${Buffer.from(`user:${a.apiKey}`).toString('base64')}` })).status).toBe(401);
    fake.queue({ type: 'status', status: 500 }, { type: 'status', status: 500 });
    expect((await chat(a.apiKey)).status).toBeGreaterThanOrEqual(200);
    fake.queue({ type: 'cut', afterChunks: 2 });
    await (await chat(a.apiKey, { stream: true })).text();
    await (await chat(a.apiKey, { messages: [{ role: 'user', content: `my key is ${a.apiKey}` }] })).text();
    await api('/api/auth/login', { body: { email: 'x@example.com', password: passwords[0] } });
    await api('/api/auth/login', { body: { email: 'x@example.com', password: a.password } });
    await new Promise((r) => setTimeout(r, 500));

    // A second gateway, shut down with SIGTERM: its start-up and shutdown logs too.
    const g2 = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { LOG_LEVEL: 'debug' } });
    gateways.push(g2);
    const viaG2 = await fetch(`${g2.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'second gateway' }] }),
    });
    expect(viaG2.status).toBe(200);
    await viaG2.text();
    expect(await g2.stop('SIGTERM')).toBe(0);

    const output = gateways.map((g) => g.output()).join('\n');
    expect(output.length).toBeGreaterThan(0);
    expect(output).not.toContain('upstream-secret-');
    for (const key of keys) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(key.slice('sk-gw-'.length));
    }
    for (const password of passwords) expect(output).not.toContain(password);
    expect(output).not.toContain(SECRETS_KEY);
    expect(output).not.toContain('test-secret-test-secret');

    // ...nor in the database's request logs.
    const logs = await tableText('RequestLog');
    for (const key of keys) expect(logs).not.toContain(key);
    expect(logs).not.toContain('upstream-secret-');
  });
});
