// #37 items 11 and 17 against the built server: key creations and edits are throttled per account
// and live keys per account are bounded (clear 4xx/429 in the account API's envelope); a key budget
// of any size the API accepts (down to one pico-dollar) keeps its key, its pages and the API working.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';

let gw: RunningGateway;
let fake: FakeUpstream;
const KEY_CHANGES = 8;
const KEYS = 5;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const limits = { login_per_ip_per_minute: 10_000, key_changes_per_account_per_minute: KEY_CHANGES, keys_per_account: KEYS };
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], overrides: { limits } }) });
}, 120_000);

afterAll(async () => {
  await gw?.stop('SIGKILL');
  await fake?.close();
});

async function signedIn(): Promise<TestAccount & { cookie: string }> {
  const a = await createAccount({ tier: 'pro', balanceUsd: '5' });
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status).toBe(200);
  return { ...a, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] };
}

function api(cookie: string, method: string, path: string, body?: unknown) {
  return fetch(`${gw.url}${path}`, {
    method,
    headers: { cookie, origin: gw.url, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function expectError(res: Response, status: number, code: string, param?: string) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const error = (JSON.parse(text) as { error: { code: string; param?: string | null; message: string } }).error;
  expect(error.code, text).toBe(code);
  if (param) expect(error.param, text).toBe(param);
  return error;
}

describe('item 17: budgets of any accepted size', () => {
  it('a budget of a hundred-millionth of a dollar (and of one pico-dollar) is stored, listed, shown and enforced, never a 500', async () => {
    const a = await signedIn();
    const created = await api(a.cookie, 'POST', '/api/keys', { name: 'tiny', budget_usd: '0.00000001', monthly_budget_usd: '0.000000000001' });
    expect(created.status, await created.clone().text()).toBe(201);
    const key = (await created.json()) as { id: string; key: string; budget_usd: string; monthly_budget_usd: string };
    expect(key).toMatchObject({ budget_usd: '0.00000001', monthly_budget_usd: '0.000000000001' });

    const list = await api(a.cookie, 'GET', '/api/keys');
    expect(list.status, await list.clone().text()).toBe(200);
    const listed = ((await list.json()) as { data: { id: string; budget_usd: string }[] }).data.find((k) => k.id === key.id)!;
    expect(listed.budget_usd).toBe('0.00000001');
    const patched = await api(a.cookie, 'PATCH', `/api/keys/${key.id}`, { name: 'still tiny' });
    expect(patched.status, await patched.clone().text()).toBe(200);
    for (const path of ['/api/usage?group_by=key', '/dashboard/keys', '/dashboard/usage']) {
      const res = await fetch(gw.url + path, { headers: { cookie: a.cookie } });
      expect(res.status, path).toBe(200);
      // No amount in scientific notation; ids are taken out first (a UUID such as 655e912e-69d2… holds "2e-6").
      const text = (await res.text()).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
      expect(text, path).not.toMatch(/\de-\d/);
    }
    // The key itself: refused for its budget, not broken.
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status, await chat.clone().text()).toBe(402);
  });

  it('a huge budget within the cap works; exponents, too many decimals and beyond the cap are a 400 naming the field', async () => {
    const a = await signedIn();
    const big = await api(a.cookie, 'POST', '/api/keys', { name: 'big', budget_usd: '999999999.999999999999' });
    expect(big.status, await big.clone().text()).toBe(201);
    expect((await api(a.cookie, 'GET', '/api/keys')).status).toBe(200);
    const bad: [string, unknown][] = [
      ['budget_usd', 1e-8],
      ['budget_usd', '1e-8'],
      ['monthly_budget_usd', '0.0000000000001'],
      ['budget_usd', 1e21],
      ['monthly_budget_usd', '1000000001'],
    ];
    for (const [field, value] of bad) {
      await expectError(await api(a.cookie, 'PATCH', `/api/keys/${a.keyId}`, { [field]: value }), 400, 'invalid_request', field);
    }
  });
});

describe('item 11: key creations and edits', () => {
  it(`an account holds at most ${KEYS} live keys: the next one is a 409 saying so; revoking one makes room`, async () => {
    const a = await signedIn(); // one key already
    const ids: string[] = [];
    for (let i = 1; i < KEYS; i++) {
      const res = await api(a.cookie, 'POST', '/api/keys', { name: `k${i}` });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const error = await expectError(await api(a.cookie, 'POST', '/api/keys', { name: 'one too many' }), 409, 'conflict');
    expect(error.message).toContain(`(${KEYS})`);
    expect((await api(a.cookie, 'DELETE', `/api/keys/${ids[0]}`)).status).toBe(200);
    expect((await api(a.cookie, 'POST', '/api/keys', { name: 'after a revocation' })).status).toBe(201);
  });

  it(`creations and edits are throttled per account (${KEY_CHANGES} a minute): a 429 with Retry-After; other accounts are unaffected`, async () => {
    const a = await signedIn();
    const b = await signedIn();
    for (let i = 0; i < KEY_CHANGES; i++) expect((await api(a.cookie, 'PATCH', `/api/keys/${a.keyId}`, { budget_usd: `${10 - i}` })).status).toBe(200);
    const limited = await api(a.cookie, 'PATCH', `/api/keys/${a.keyId}`, { budget_usd: '1' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectError(limited, 429, 'rate_limit_exceeded');
    await expectError(await api(a.cookie, 'POST', '/api/keys', { name: 'x' }), 429, 'rate_limit_exceeded');
    expect((await api(b.cookie, 'PATCH', `/api/keys/${b.keyId}`, { budget_usd: '1' })).status).toBe(200);
  });
});
