// Issue 41 item 5 in a real browser, against a local OpenID Connect provider (tests/support/oidc-idp.ts,
// the npm oidc-provider package): the login page's SSO button goes through the IdP and lands in the
// dashboard with the same session a password log-in makes; a verified email links to the existing
// password account (and the link holds when the email at the IdP changes); an unverified one is
// refused with a page that says why (en, zh-CN); a tampered or replayed state and a token with
// another nonce are refused; an organization requiring SSO for its domain stops password log-in
// there (and a second organization cannot claim the domain: 409).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort, startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startLocalIdp, type LocalIdp } from '../support/oidc-idp';
import { createAccount } from '../support/accounts';
import { axeProblems } from '../support/axe';
import { createUser } from '@/lib/accounts/queries';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let idp: LocalIdp;
let browser: Browser;
const contexts: BrowserContext[] = [];

const uniq = () => randomBytes(5).toString('hex');

async function freshPage(opts: { lang?: 'en' | 'zh-CN'; phone?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext(opts.phone ? { viewport: { width: 390, height: 844 } } : {});
  contexts.push(context);
  await context.addCookies([{ name: 'lang', value: opts.lang ?? 'en', url: gw.url }]);
  return context.newPage();
}

/** Presses the OIDC button on the login page; resolves when the browser is back on the gateway, past the callback. */
async function ssoFromLogin(page: Page) {
  await page.goto(`${gw.url}/login`);
  const callback = page.waitForRequest((r) => r.url().startsWith(`${gw.url}/api/auth/callback/oidc`), { timeout: 30_000 });
  await page.getByTestId('sso-oidc').click();
  await callback;
  // Back from the IdP: the dashboard, or the login page saying what went wrong.
  await page.waitForURL((u) => u.pathname === '/dashboard' || (u.pathname === '/login' && u.searchParams.has('error')), {
    waitUntil: 'domcontentloaded',
    timeout: 30_000,
  });
}

async function me(page: Page): Promise<{ status: number; user?: { id: string; email: string } }> {
  const res = await page.request.get(`${gw.url}/api/me`);
  return { status: res.status(), user: res.ok() ? ((await res.json()) as { user: { id: string; email: string } }).user : undefined };
}

const apiWrite = (page: Page, method: 'POST' | 'PUT', path: string, body: unknown) =>
  page.request.fetch(`${gw.url}${path}`, { method, headers: { origin: gw.url, 'content-type': 'application/json' }, data: JSON.stringify(body) });

beforeAll(async () => {
  const idpPort = await freePort();
  gw = await startGateway({
    config: testConfig({ openaiUrls: ['http://127.0.0.1:9'], overrides: { limits: { login_per_ip_per_minute: 10_000 } } }),
    mode: 'lean',
    env: {
      OIDC_ISSUER: `http://127.0.0.1:${idpPort}`,
      OIDC_CLIENT_ID: 'gateway-test',
      OIDC_CLIENT_SECRET: 'idp-client-secret-for-tests-only',
      OIDC_NAME: 'Acme IdP',
    },
  });
  idp = await startLocalIdp({ port: idpPort, redirectUris: [`${gw.url}/api/auth/callback/oidc`] });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await gw?.stop();
  await idp?.close();
});

describe('single sign-on through a local OIDC provider', { timeout: 120_000 }, () => {
  it('shows a button per configured provider on the login and register pages, in English and Chinese, axe-clean on a phone', async () => {
    const en = await freshPage({ phone: true });
    await en.goto(`${gw.url}/login`);
    await expect(en.getByTestId('sso-oidc').textContent()).resolves.toBe('Continue with Acme IdP');
    expect(await en.getByTestId('sso-providers').getByRole('button').count()).toBe(1);
    expect(await en.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await axeProblems(en)).toEqual([]);
    await en.goto(`${gw.url}/register`);
    await expect(en.getByTestId('sso-oidc').textContent()).resolves.toBe('Continue with Acme IdP');
    const zh = await freshPage({ lang: 'zh-CN' });
    await zh.goto(`${gw.url}/login`);
    await expect(zh.getByTestId('sso-oidc').textContent()).resolves.toBe('使用 Acme IdP 继续');
  });

  it('signs a new person in through the IdP: the dashboard, with the session a password log-in makes', async () => {
    const sub = `new-${uniq()}`;
    const email = `new-${uniq()}@example.com`;
    idp.setAccount(sub, { email, email_verified: true, name: 'New Person' });
    idp.signInAs(sub);
    const page = await freshPage();
    await ssoFromLogin(page);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const who = await me(page);
    expect(who.status).toBe(200);
    expect(who.user?.email).toBe(email);
    // The session is the gateway account's: an /api mutation works with it (CSRF guard, session epoch).
    const key = await apiWrite(page, 'POST', '/api/keys', { name: 'from sso' });
    expect(key.status()).toBe(201);
    const db = await getDb();
    const link = await db.linkedIdentity.findUnique({ where: { provider_subject: { provider: 'oidc', subject: sub } } });
    expect(link?.userId).toBe(who.user?.id);
    // No password works for an account made by SSO.
    const pw = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: '!sso' }),
    });
    expect(pw.status).toBe(401);
  });

  it('links a verified email to the existing password account, and keeps reaching it by subject when the email changes', async () => {
    const account = await createAccount();
    const sub = `link-${uniq()}`;
    idp.setAccount(sub, { email: account.email.toUpperCase(), email_verified: true });
    idp.signInAs(sub);
    const page = await freshPage();
    await ssoFromLogin(page);
    expect(page.url()).toBe(`${gw.url}/dashboard`);
    expect((await me(page)).user?.id).toBe(account.userId);

    // The address at the IdP changes (even to an unverified one): the linked subject still reaches the account.
    idp.setAccount(sub, { email: `renamed-${uniq()}@example.com`, email_verified: false });
    const again = await freshPage();
    await ssoFromLogin(again);
    expect(new URL(again.url()).pathname).toBe('/dashboard');
    expect((await me(again)).user?.id).toBe(account.userId);
  });

  it('refuses an unverified email with a page that says why (en, zh-CN), and links nothing', async () => {
    const account = await createAccount();
    const sub = `unverified-${uniq()}`;
    idp.setAccount(sub, { email: account.email, email_verified: false });
    idp.signInAs(sub);
    const page = await freshPage();
    await ssoFromLogin(page);
    expect(new URL(page.url()).pathname).toBe('/login');
    await expect(page.getByTestId('sso-error').textContent()).resolves.toContain('has not verified this email address');
    expect((await me(page)).status).toBe(401);
    const db = await getDb();
    expect(await db.linkedIdentity.findUnique({ where: { provider_subject: { provider: 'oidc', subject: sub } } })).toBeNull();

    // Absent email_verified is no verification either; and the refusal in Chinese.
    const sub2 = `no-claim-${uniq()}`;
    idp.setAccount(sub2, { email: `x-${uniq()}@example.com` });
    idp.signInAs(sub2);
    const zh = await freshPage({ lang: 'zh-CN' });
    await ssoFromLogin(zh);
    await expect(zh.getByTestId('sso-error').textContent()).resolves.toContain('你的身份提供方尚未验证此邮箱地址');
    expect((await me(zh)).status).toBe(401);
  });

  it('refuses a suspended account, even by its verified email, in its own words', async () => {
    const account = await createAccount();
    await (await getDb()).user.update({ where: { id: account.userId }, data: { status: 'suspended' } });
    const sub = `suspended-${uniq()}`;
    idp.setAccount(sub, { email: account.email, email_verified: true });
    idp.signInAs(sub);
    const page = await freshPage();
    await ssoFromLogin(page);
    expect(new URL(page.url()).searchParams.get('error')).toBe('SsoSuspended');
    await expect(page.getByTestId('sso-error').textContent()).resolves.toContain('This account is suspended');
    expect((await me(page)).status).toBe(401);
  });

  it('refuses a tampered state and a replayed callback', async () => {
    const sub = `state-${uniq()}`;
    idp.setAccount(sub, { email: `state-${uniq()}@example.com`, email_verified: true });
    idp.signInAs(sub);

    // The IdP is handed another state than the one this browser was given, and returns it (a
    // redirect target cannot be routed in Playwright, so the state is changed on its way out).
    const tampered = await freshPage();
    await tampered.route(
      (u) => u.origin === idp.issuer && u.pathname === '/auth' && u.searchParams.has('state'),
      (route) => {
        const url = new URL(route.request().url());
        url.searchParams.set('state', `${url.searchParams.get('state')}x`);
        return route.continue({ url: url.toString() });
      },
    );
    await ssoFromLogin(tampered);
    expect(new URL(tampered.url()).pathname).toBe('/login');
    await expect(tampered.getByTestId('sso-error').textContent()).resolves.toContain('failed or was cancelled');
    expect((await me(tampered)).status).toBe(401);
    expect(gw.output()).toContain('state mismatch');

    // A good sign-in, and its callback URL (code + state) replayed in another browser.
    const good = await freshPage();
    let callbackUrl = '';
    good.on('request', (r) => {
      if (r.url().includes('/api/auth/callback/oidc')) callbackUrl = r.url();
    });
    await ssoFromLogin(good);
    expect(new URL(good.url()).pathname).toBe('/dashboard');
    expect(callbackUrl).toContain('state=');
    const replay = await freshPage();
    await replay.goto(callbackUrl);
    await replay.waitForURL((u) => u.pathname === '/login', { waitUntil: 'commit' });
    await replay.waitForLoadState('domcontentloaded');
    await expect(replay.getByTestId('sso-error').isVisible()).resolves.toBe(true);
    expect((await me(replay)).status).toBe(401);
    expect(gw.output()).toContain('State cookie was missing');
  });

  it('refuses an id token whose nonce is not the one this browser sent', async () => {
    const sub = `nonce-${uniq()}`;
    idp.setAccount(sub, { email: `nonce-${uniq()}@example.com`, email_verified: true });
    idp.signInAs(sub);
    const page = await freshPage();
    // The IdP is asked with another nonce than the gateway chose: the id token it signs carries that one.
    await page.route(
      (u) => u.origin === idp.issuer && u.pathname === '/auth' && u.searchParams.has('nonce'),
      (route) => {
        const url = new URL(route.request().url());
        url.searchParams.set('nonce', randomBytes(16).toString('base64url'));
        return route.continue({ url: url.toString() });
      },
    );
    await ssoFromLogin(page);
    expect(new URL(page.url()).pathname).toBe('/login');
    await expect(page.getByTestId('sso-error').textContent()).resolves.toContain('failed or was cancelled');
    expect((await me(page)).status).toBe(401);
    expect(gw.output()).toContain('nonce mismatch');
    const db = await getDb();
    expect(await db.linkedIdentity.findUnique({ where: { provider_subject: { provider: 'oidc', subject: sub } } })).toBeNull();
  });

  it('an organization requiring SSO for its domain stops password log-in there; a second organization gets 409 for it', async () => {
    const domain = `acme-${uniq()}.example`;
    // The owner signs in through SSO with a verified address at the domain: the proof the claim needs.
    const ownerSub = `owner-${uniq()}`;
    idp.setAccount(ownerSub, { email: `owner@${domain}`, email_verified: true });
    idp.signInAs(ownerSub);
    const owner = await freshPage();
    await ssoFromLogin(owner);
    expect(new URL(owner.url()).pathname).toBe('/dashboard');
    const org = (await (await apiWrite(owner, 'POST', '/api/orgs', { name: 'Acme' })).json()) as { id: string };
    const db = await getDb();

    // A password account at the domain, made before the rule (the CLI's way).
    const alice = { email: `alice@${domain}`, password: 'correct-horse-9' };
    await createUser(alice);
    const before = await fetch(`${gw.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alice) });
    expect(before.status).toBe(200);

    // Not the domain of a person who has not proven it; and a public mail service never.
    const stranger = await createAccount();
    const strangerOrg = await fetch(`${gw.url}/api/orgs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: await passwordCookie(stranger) },
      body: JSON.stringify({ name: 'Not Acme' }),
    });
    const strangerOrgId = ((await strangerOrg.json()) as { id: string }).id;
    const unproven = await fetch(`${gw.url}/api/orgs/${strangerOrgId}/sso`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: await passwordCookie(stranger) },
      body: JSON.stringify({ domains: [domain] }),
    });
    expect(unproven.status).toBe(403);
    expect(((await unproven.json()) as { error: { message_code: string } }).error.message_code).toBe('org.sso_domain_unproven');
    const gmail = await apiWrite(owner, 'PUT', `/api/orgs/${org.id}/sso`, { domains: ['gmail.com'] });
    expect(gmail.status()).toBe(400);

    // Owners and admins only: a developer of the organization is refused, nothing changed.
    const [dev, admin] = await Promise.all([createAccount(), createAccount()]);
    await db.membership.createMany({
      data: [
        { orgId: org.id, userId: dev.userId, role: 'developer' },
        { orgId: org.id, userId: admin.userId, role: 'admin' },
      ],
    });
    const devPut = await fetch(`${gw.url}/api/orgs/${org.id}/sso`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: await passwordCookie(dev) },
      body: JSON.stringify({ domains: [] }),
    });
    expect(devPut.status).toBe(403);
    expect(((await devPut.json()) as { error: { message_code: string } }).error.message_code).toBe('org.role_refused');
    const adminGet = await fetch(`${gw.url}/api/orgs/${org.id}/sso`, { headers: { cookie: await passwordCookie(admin) } });
    expect(await adminGet.json()).toEqual({ domains: [] });

    // The owner sets it on the organization's page (the organization is selected since it was created).
    await owner.goto(`${gw.url}/dashboard/organization`);
    const form = owner.getByTestId('sso-domains-form');
    await form.locator('textarea').fill('gmail.com');
    await form.getByRole('button', { name: 'Save domains' }).click();
    await expect(owner.getByTestId('sso-domains-error').textContent()).resolves.toMatch(/gmail\.com/);
    await form.locator('textarea').fill(`@${domain.toUpperCase()}`);
    await form.getByRole('button', { name: 'Save domains' }).click();
    await owner.getByTestId('sso-domains-saved').waitFor();
    expect(await form.locator('textarea').inputValue()).toBe(domain);
    expect(await axeProblems(owner)).toEqual([]);
    expect(await (await owner.request.get(`${gw.url}/api/orgs/${org.id}/sso`)).json()).toEqual({ domains: [domain] });
    const audit = (await (await owner.request.get(`${gw.url}/api/orgs/${org.id}/audit`)).json()) as { data?: { action: string }[] };
    expect(JSON.stringify(audit)).toContain('org.sso_domains');

    // Password log-in at the domain: refused, naming SSO, in the browser (en and zh-CN) and in the API.
    const page = await freshPage();
    await page.goto(`${gw.url}/login`);
    await page.fill('#email', alice.email);
    await page.fill('#password', alice.password);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('auth-error').textContent()).resolves.toContain(`Accounts at ${domain} sign in through single sign-on (SSO)`);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect((await me(page)).status).toBe(401);
    const zh = await freshPage({ lang: 'zh-CN' });
    await zh.goto(`${gw.url}/login`);
    await zh.fill('#email', alice.email);
    await zh.fill('#password', alice.password);
    await zh.getByTestId('login-submit').click();
    await expect(zh.getByTestId('auth-error').textContent()).resolves.toContain('须通过单点登录（SSO）登录');
    const api = await fetch(`${gw.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alice) });
    expect(api.status).toBe(403);
    expect(((await api.json()) as { error: { message_code: string } }).error.message_code).toBe('auth.sso_required');
    const register = await fetch(`${gw.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bob@${domain}`, password: 'correct-horse-9' }),
    });
    expect(register.status).toBe(403);

    // SSO still works for Alice: her verified address links to her account.
    const aliceSub = `alice-${uniq()}`;
    idp.setAccount(aliceSub, { email: alice.email, email_verified: true });
    idp.signInAs(aliceSub);
    const aliceSso = await freshPage();
    await ssoFromLogin(aliceSso);
    expect(new URL(aliceSso.url()).pathname).toBe('/dashboard');
    expect((await me(aliceSso)).user?.email).toBe(alice.email);

    // Another organization, of a person who also proved the domain, cannot claim it: 409.
    const otherSub = `other-${uniq()}`;
    idp.setAccount(otherSub, { email: `carol@${domain}`, email_verified: true });
    idp.signInAs(otherSub);
    const other = await freshPage();
    await ssoFromLogin(other);
    const org2 = (await (await apiWrite(other, 'POST', '/api/orgs', { name: 'Acme 2' })).json()) as { id: string };
    const clash = await apiWrite(other, 'PUT', `/api/orgs/${org2.id}/sso`, { domains: [domain] });
    expect(clash.status()).toBe(409);
    expect(((await clash.json()) as { error: { message_code: string } }).error.message_code).toBe('org.sso_domain_taken');

    // Releasing the domain gives password log-in back.
    expect((await apiWrite(owner, 'PUT', `/api/orgs/${org.id}/sso`, { domains: [] })).status()).toBe(200);
    const after = await fetch(`${gw.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alice) });
    expect(after.status).toBe(200);
  });
});

async function passwordCookie(account: { email: string; password: string }): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}
