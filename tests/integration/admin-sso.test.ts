// Single sign-on in the operator console against the built server (docs/decisions/052): the
// providers the environment configures with the callback URL to register and no secret, the
// organizations' SSO-required domains, and the operator releasing one (audited), after which
// password log-in works again for an address there.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, createOperator, signIn, type TestAccount } from '../support/accounts';
import { createUser } from '@/lib/accounts/queries';
import { getDb } from '@/lib/db';

const GITHUB_SECRET = `ghsecret-${randomBytes(8).toString('hex')}`;
let gw: RunningGateway;
let up: FakeUpstream;
let operator: TestAccount;
let opCookie: string;
let ipSeq = 0;
const ip = () => `10.61.${Math.floor(++ipSeq / 250)}.${ipSeq % 250}`;

beforeAll(async () => {
  up = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [up.url], overrides: { limits: { login_per_ip_per_minute: 10_000 } } }),
    env: { GITHUB_CLIENT_ID: 'gh-client-123', GITHUB_CLIENT_SECRET: GITHUB_SECRET },
  });
  operator = await createOperator();
  opCookie = await signIn(gw.url, operator, ip());
});

afterAll(async () => {
  await gw?.stop();
  await up?.close();
});

const call = (cookie: string, method: string, path: string) => fetch(gw.url + path, { method, headers: { cookie, origin: gw.url, 'x-forwarded-for': ip() } });

function passwordLogin(email: string, password: string) {
  return fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip() },
    body: JSON.stringify({ email, password }),
  });
}

interface SsoJson {
  providers: { id: string; name: string; enabled: boolean; issuer: string | null; client_id: string | null; callback_url: string }[];
  domains: { domain: string; org_id: string; org_name: string | null }[];
}

describe('operator SSO console', () => {
  it('refuses anyone but an operator', async () => {
    const user = await createAccount();
    const cookie = await signIn(gw.url, user, ip());
    for (const [method, path] of [
      ['GET', '/api/admin/sso'],
      ['DELETE', '/api/admin/sso/domains/example.org'],
    ]) {
      const res = await call(cookie, method, path);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { message_code: string } }).error.message_code).toBe('admin.operator_only');
    }
  });

  it('shows the configured providers with their callback URLs and no secret', async () => {
    const res = await call(opCookie, 'GET', '/api/admin/sso');
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(text).not.toContain(GITHUB_SECRET);
    const body = JSON.parse(text) as SsoJson;
    expect(body.providers).toEqual([
      { id: 'oidc', name: 'OpenID Connect', enabled: false, issuer: null, client_id: null, callback_url: `${gw.url}/api/auth/callback/oidc` },
      {
        id: 'google',
        name: 'Google',
        enabled: false,
        issuer: 'https://accounts.google.com',
        client_id: null,
        callback_url: `${gw.url}/api/auth/callback/google`,
      },
      { id: 'github', name: 'GitHub', enabled: true, issuer: null, client_id: 'gh-client-123', callback_url: `${gw.url}/api/auth/callback/github` },
    ]);
    const page = await fetch(`${gw.url}/admin/sso`, { headers: { cookie: opCookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(`${gw.url}/api/auth/callback/github`);
    expect(html).not.toContain(GITHUB_SECRET);
  });

  it('lists the SSO-required domains and releases one, audited, after which password log-in works there', async () => {
    const db = await getDb();
    const owner = await createAccount();
    const orgId = randomUUID();
    const domain = `acme-${randomBytes(4).toString('hex')}.test`;
    await db.user.create({ data: { id: orgId, email: `org-${orgId}@organizations.invalid`, passwordHash: '!organization' } });
    await db.organization.create({ data: { id: orgId, name: 'Acme SSO' } });
    await db.membership.create({ data: { orgId, userId: owner.userId, role: 'owner' } });
    // Claimed as PUT /api/orgs/:id/sso would after its proof (tested in the SSO suite).
    await db.ssoDomain.create({ data: { domain, orgId } });
    const email = `dev@${domain}`;
    await createUser({ email, password: 'correct-horse-9', tier: 'free', balancePico: 0n });

    const refused = await passwordLogin(email, 'correct-horse-9');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message_code: string } }).error.message_code).toBe('auth.sso_required');

    const listed = (await (await call(opCookie, 'GET', '/api/admin/sso')).json()) as SsoJson;
    expect(listed.domains).toContainEqual(expect.objectContaining({ domain, org_id: orgId, org_name: 'Acme SSO' }));

    const released = await call(opCookie, 'DELETE', `/api/admin/sso/domains/${domain}`);
    expect(released.status, await released.clone().text()).toBe(200);
    expect(await db.ssoDomain.findUnique({ where: { domain } })).toBeNull();
    const audit = await db.auditLog.findFirst({ where: { action: 'admin.sso_domain_release', targetId: orgId } });
    expect(audit).toMatchObject({ actorId: operator.userId, targetType: 'organization', before: { domain } });

    expect((await passwordLogin(email, 'correct-horse-9')).status).toBe(200);
    // Gone: a second release is a 404 naming the domain.
    const again = await call(opCookie, 'DELETE', `/api/admin/sso/domains/${domain}`);
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain(domain);
    // A name longer than any domain is refused before it reaches the database, naming the field.
    const tooLong = await call(opCookie, 'DELETE', `/api/admin/sso/domains/${'a'.repeat(254)}`);
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { error: { param?: string } }).error.param).toBe('domain');
  });
});
