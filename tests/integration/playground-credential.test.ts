// The dashboard playground's session credential (#40 item 3, lib/auth/playground.ts) against the
// built server: minted only for a signed-in session from this site, accepted by the gateway only
// with that session's cookie, from this site's pages and before it expires; a request made with it
// is admitted, rate-limited, billed and logged as the account's, under the Playground key id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';

const SECRET = 'test-secret-test-secret-test-secret'; // what tests/support/gateway.ts gives the server
process.env.NEXTAUTH_SECRET = SECRET;

type Accounts = typeof import('../support/accounts');
type Playground = typeof import('@/lib/auth/playground');
type Db = Awaited<ReturnType<typeof import('@/lib/db').getDb>>;

let accounts: Accounts;
let pg: Playground;
let db: Db;
let fake: FakeUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  accounts = await import('../support/accounts');
  pg = await import('@/lib/auth/playground');
  db = await (await import('@/lib/db')).getDb();
  fake = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], overrides: { limits: { login_per_ip_per_minute: 10_000 } } }),
    env: { NEXTAUTH_URL: '', PUBLIC_BASE_URL: '', TRUST_PROXY: '0' },
  });
}, 120_000);

afterAll(async () => {
  await gw?.stop('SIGKILL');
  await fake?.close();
  await (await import('@/lib/limits/runtime')).getLimiter().close();
  await (await import('@/lib/billing/writer')).closeLogWriter();
  await db?.$disconnect();
});

async function sessionFor(email: string, password: string): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

async function mint(cookie: string, headers: Record<string, string> = { origin: gw.url }): Promise<Response> {
  return fetch(`${gw.url}/api/playground/token`, { method: 'POST', headers: { 'content-type': 'application/json', cookie, ...headers }, body: '{}' });
}

async function tokenFor(cookie: string): Promise<string> {
  const res = await mint(cookie);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { token: string; expires_at: string };
  expect(Date.parse(body.expires_at) - Date.now()).toBeLessThanOrEqual(pg.PLAYGROUND_TTL_MS);
  return body.token;
}

function chat(token: string, headers: Record<string, string>, model = 'claude-sonnet-4-5') {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      max_tokens: 50,
    }),
  });
}

async function errorOf(res: Response): Promise<{ status: number; message: string }> {
  const body = (await res.json()) as { error?: { message?: string } };
  return { status: res.status, message: body.error?.message ?? '' };
}

describe('the playground credential', { timeout: 60_000 }, () => {
  it('is minted only for a signed-in session, and only from this site', async () => {
    const a = await accounts.createAccount({ balanceUsd: '5' });
    const cookie = await sessionFor(a.email, a.password);
    expect((await mint('')).status).toBe(401);
    expect((await mint(cookie, {})).status).toBe(403); // no Origin nor Referer
    expect((await mint(cookie, { origin: 'https://evil.example' })).status).toBe(403);
    const ok = await mint(cookie);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
  });

  it('bills and logs a request as the account, under the Playground key id, through the Anthropic channel', async () => {
    const a = await accounts.createAccount({ balanceUsd: '5' });
    const cookie = await sessionFor(a.email, a.password);
    const token = await tokenFor(cookie);
    const before = await accounts.balanceOf(a.userId);
    const res = await chat(token, { cookie, origin: gw.url, 'sec-fetch-site': 'same-origin' });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content.length).toBeGreaterThan(0);
    const cost = res.headers.get('x-service-cost-usd')!;
    expect(Number(cost)).toBeGreaterThan(0);
    const requestId = res.headers.get('x-request-id')!;
    const row = await accounts.waitFor(() => db.requestLog.findFirst({ where: { id: requestId } }));
    expect(row.userId).toBe(a.userId);
    expect(row.apiKeyId).toBe(pg.PLAYGROUND_KEY_ID);
    expect(row.modelServed).toBe('claude-sonnet-4-5');
    expect(row.costUsd.toFixed(12)).toBe(Number(cost).toFixed(12));
    const after = await accounts.waitFor(async () => {
      const now = await accounts.balanceOf(a.userId);
      return now !== before && now;
    });
    expect(Number(before) - Number(after)).toBeCloseTo(Number(cost), 12);
    expect(fake.requests.some((r) => r.path === '/v1/messages')).toBe(true);
  });

  it('is refused without its session, with another session, cross-origin, forged or expired', async () => {
    const a = await accounts.createAccount({ balanceUsd: '5' });
    const b = await accounts.createAccount({ balanceUsd: '5' });
    const cookie = await sessionFor(a.email, a.password);
    const other = await sessionFor(b.email, b.password);
    const token = await tokenFor(cookie);
    const origin = gw.url;

    const noSession = await errorOf(await chat(token, { origin }));
    expect(noSession.status).toBe(401);
    expect(noSession.message).toContain('only accepted with the session');
    expect((await chat(token, { origin, cookie: other })).status).toBe(401);
    // Another sign-in of the same account is another session.
    await new Promise((r) => setTimeout(r, 5));
    expect((await chat(token, { origin, cookie: await sessionFor(a.email, a.password) })).status).toBe(401);

    const crossOrigin = await errorOf(await chat(token, { cookie, origin: 'https://evil.example' }));
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.message).toContain('only accepted from the playground page');
    expect((await chat(token, { cookie })).status).toBe(403); // no Origin at all
    expect((await chat(token, { cookie, origin, 'sec-fetch-site': 'cross-site' })).status).toBe(403);

    const [payload, mac] = token.slice(pg.PLAYGROUND_PREFIX.length).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { u: string; t: number; e: number };
    const stretched = Buffer.from(JSON.stringify({ ...claims, e: claims.e + 86_400_000 })).toString('base64url');
    expect((await chat(`${pg.PLAYGROUND_PREFIX}${stretched}.${mac}`, { cookie, origin })).status).toBe(401);
    const otherAccount = Buffer.from(JSON.stringify({ ...claims, u: b.userId })).toString('base64url');
    expect((await chat(`${pg.PLAYGROUND_PREFIX}${otherAccount}.${mac}`, { cookie: other, origin })).status).toBe(401);

    // Signed with the server's secret, for this very session, but past its expiry.
    const expired = pg.mintPlaygroundToken(a.userId, claims.t, Date.now() - pg.PLAYGROUND_TTL_MS - 1000).token;
    const late = await errorOf(await chat(expired, { cookie, origin }));
    expect(late.status).toBe(401);
    expect(late.message).toContain('expired');

    // None of these reached an upstream or cost anything.
    expect(await accounts.balanceOf(a.userId)).toBe('5.000000000000');
    // And the same credential, with its session and from the site, still works.
    expect((await chat(token, { cookie, origin })).status).toBe(200);
  });

  it("is limited by the account's request rate, like a key", async () => {
    const a = await accounts.createAccount({ balanceUsd: '5', limits: { rpm: 2 } });
    const cookie = await sessionFor(a.email, a.password);
    const token = await tokenFor(cookie);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat(token, { cookie, origin: gw.url }, 'gpt-4o-mini');
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('ends with the session: refused once the account signs out everywhere', async () => {
    const a = await accounts.createAccount({ balanceUsd: '5' });
    const cookie = await sessionFor(a.email, a.password);
    const token = await tokenFor(cookie);
    await db.user.update({ where: { id: a.userId }, data: { sessionsValidFrom: new Date(Date.now() + 1000) } });
    // A fresh credential: the first one's account may be cached for AUTH_CACHE_TTL_S.
    expect((await mint(cookie)).status).toBe(401);
    const fresh = pg.mintPlaygroundToken(
      a.userId,
      JSON.parse(Buffer.from(token.slice(pg.PLAYGROUND_PREFIX.length).split('.')[0]!, 'base64url').toString()).t,
    ).token;
    expect((await chat(fresh, { cookie, origin: gw.url })).status).toBe(401);
  });
});
