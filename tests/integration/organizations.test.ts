// Organizations (issue 41 item 1, API) against the built server: an owner creates one, invites a
// developer who accepts; the developer makes a key on the organization's wallet and spends from it;
// the owner sees the spend by member; roles refuse what they must (403, nothing changed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { creditBalance } from '@/lib/billing/ledger';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let fake: FakeUpstream;
let owner: TestAccount & { cookie: string };
let dev: TestAccount & { cookie: string };

async function signIn(a: TestAccount, ip: string) {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status).toBe(200);
  return {
    ...a,
    cookie: res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; '),
  };
}

const api = (who: { cookie: string }, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { cookie: who.cookie, origin: gw.url, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1' } });
  owner = await signIn(await createAccount({ tier: 'pro', balanceUsd: '1' }), '10.41.0.1');
  dev = await signIn(await createAccount({ tier: 'free' }), '10.41.0.2');
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await (await getDb()).$disconnect();
});

describe('organizations', { timeout: 60_000 }, () => {
  it('create → invite → accept → the developer spends from the organization → the owner sees it by member; roles refuse the rest', async () => {
    const created = await api(owner, 'POST', '/api/orgs', { name: 'Acme' });
    expect(created.status, await created.clone().text()).toBe(201);
    const org = (await created.json()) as { id: string; role: string };
    expect(org.role).toBe('owner');
    const inOrg = { 'x-organization-id': org.id };
    await creditBalance(org.id, 'admin_credit', 5_000_000_000_000n, { note: 'test' }); // $5

    const invited = await api(owner, 'POST', `/api/orgs/${org.id}/invitations`, { email: dev.email, role: 'developer' });
    expect(invited.status, await invited.clone().text()).toBe(201);
    const { link } = (await invited.json()) as { link: string };
    const token = decodeURIComponent(link.split('/invite/')[1]!);

    // Someone else cannot use the link.
    const stranger = await signIn(await createAccount({}), '10.41.0.3');
    expect((await api(stranger, 'POST', '/api/invitations/accept', { token })).status).toBeGreaterThanOrEqual(400);
    const accepted = await api(dev, 'POST', '/api/invitations/accept', { token });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    const listed = (await (await api(dev, 'GET', '/api/orgs')).json()) as { data: { id: string; role: string }[] };
    expect(listed.data.find((o) => o.id === org.id)?.role).toBe('developer');

    // The developer's key is on the organization's wallet and spends from it.
    const keyRes = await api(dev, 'POST', '/api/keys', { name: 'dev key' }, inOrg);
    expect(keyRes.status, await keyRes.clone().text()).toBe(201);
    const key = (await keyRes.json()) as { id: string; key: string };
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(chat.status).toBe(200);
    const cost = chat.headers.get('x-service-cost-usd')!;
    await chat.arrayBuffer();
    const db = await getDb();
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id: chat.headers.get('x-request-id')! } }), 10_000);
    expect(row.userId).toBe(org.id);

    // A developer may not read the organization's usage or delete it: 403 in the API envelope, nothing changed.
    const usage = await api(dev, 'GET', '/api/usage', undefined, inOrg);
    expect(usage.status).toBe(403);
    expect(((await usage.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    const del = await api(dev, 'DELETE', `/api/orgs/${org.id}`, undefined, inOrg);
    expect(del.status).toBe(403);
    expect((await db.organization.findUnique({ where: { id: org.id } }))?.deletedAt).toBeNull();
    // Nor act on an organization it does not belong to.
    expect((await api(stranger, 'GET', '/api/keys', undefined, inOrg)).status).toBe(403);

    // The owner sees the spend by member.
    const byMember = await waitFor(async () => {
      const res = await api(owner, 'GET', `/api/orgs/${org.id}/usage`, undefined, inOrg);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { by_member: { email?: string; cost_usd?: string }[] };
      const mine = body.by_member.find((m) => m.email === dev.email);
      return mine && mine.cost_usd !== '0' && mine.cost_usd !== undefined ? mine : null;
    }, 10_000);
    expect(Number(byMember.cost_usd)).toBeCloseTo(Number(cost), 9);
  });
});
