// Mail (issue 41 item 3; docs/decisions/050) against the built server and a local SMTP sink the test
// starts: an invitation arrives with a link that works; a password reset end to end (request, mail,
// link, old password refused, new one works, reuse and expiry refused, an unknown email answered
// alike and mailed nothing); email verification gating redeem and recharge until the mailed link is
// opened. A second gateway without SMTP_URL and with verification off shows that nothing changes there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, signIn } from '../support/accounts';
import { linkIn, startSmtpSink, type SmtpSink } from '../support/smtp-sink';
import { createCodeBatch } from '@/lib/admin/redemption';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from '../support/gateway';
import { getDb } from '@/lib/db';

let fake: FakeUpstream;
let sink: SmtpSink;
let gw: RunningGateway; // SMTP + verification required
let plain: RunningGateway; // no SMTP, defaults
let sinkClosed = false;

beforeAll(async () => {
  fake = await startFakeUpstream();
  sink = await startSmtpSink();
  [gw, plain] = await Promise.all([
    startGateway({
      config: testConfig({ openaiUrls: [fake.url], overrides: { auth: { require_email_verification: true } } }),
      env: { TRUST_PROXY: '1', SMTP_URL: sink.url, MAIL_FROM: 'Gateway Test <gateway@example.test>' },
    }),
    startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1' } }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([gw?.stop(), plain?.stop()]);
  await fake?.close();
  if (!sinkClosed) await sink?.close();
  await (await getDb()).$disconnect();
});

const ip = () => `10.50.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
const email = () => `m-${randomBytes(6).toString('hex')}@example.com`;

function call(base: string, method: string, path: string, opts: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  return fetch(`${base}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      origin: base,
      ...(opts.cookie ? { cookie: opts.cookie } : {}),
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

const login = (base: string, e: string, password: string) =>
  call(base, 'POST', '/api/auth/login', { body: { email: e, password }, headers: { 'x-forwarded-for': ip() } });

async function register(base: string, e: string, headers: Record<string, string> = {}) {
  const res = await call(base, 'POST', '/api/auth/register', {
    body: { email: e, password: 'plain-tiger-42' },
    headers: { 'x-forwarded-for': ip(), ...headers },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, body: (await res.json()) as { user: { id: string } } };
}

async function newCode(): Promise<string> {
  const batch = await createCodeBatch({ id: null, label: 'test' }, { amountPico: 1_000_000_000_000n, count: 1 });
  return batch.codes[0]!.code;
}

type ErrorBody = { error: { code: string; message: string; message_code?: string } };

describe('mail', { timeout: 90_000 }, () => {
  it('an invitation is mailed with a link that lets the invitee join', async () => {
    const owner = await createAccount({ tier: 'pro' });
    const ownerCookie = await signIn(gw.url, owner, ip());
    const org = (await (await call(gw.url, 'POST', '/api/orgs', { cookie: ownerCookie, body: { name: 'Mailed Inc' } })).json()) as { id: string };
    const invitee = await createAccount({});
    const since = sink.mails.length;
    const invited = await call(gw.url, 'POST', `/api/orgs/${org.id}/invitations`, { cookie: ownerCookie, body: { email: invitee.email, role: 'developer' } });
    expect(invited.status, await invited.clone().text()).toBe(201);
    const answer = (await invited.json()) as { link: string; mailed: boolean };
    expect(answer.mailed).toBe(true);

    const mail = await sink.waitFor(invitee.email, { since, subject: /invited you to Mailed Inc/ });
    expect(mail.from).toBe('gateway@example.test');
    const link = linkIn(mail, `${gw.url}/invite/`);
    expect(link).toBe(answer.link);
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.text).toContain('as developer');

    const token = decodeURIComponent(link.split('/invite/')[1]!);
    const accepted = await call(gw.url, 'POST', '/api/invitations/accept', { cookie: await signIn(gw.url, invitee, ip()), body: { token } });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    const db = await getDb();
    expect((await db.membership.findFirst({ where: { orgId: org.id, userId: invitee.userId } }))?.role).toBe('developer');
  });

  it('without SMTP an invitation is not mailed and its link is answered to the inviter', async () => {
    const owner = await createAccount({ tier: 'pro' });
    const cookie = await signIn(plain.url, owner, ip());
    const org = (await (await call(plain.url, 'POST', '/api/orgs', { cookie, body: { name: 'Unmailed' } })).json()) as { id: string };
    const res = await call(plain.url, 'POST', `/api/orgs/${org.id}/invitations`, { cookie, body: { email: email(), role: 'billing' } });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { link: string; mailed: boolean };
    expect(body.mailed).toBe(false);
    expect(body.link).toMatch(/\/invite\//);
  });

  it('password reset: mailed link sets a new password once, ends sessions, and expires', async () => {
    const a = await createAccount({});
    const oldSession = await signIn(gw.url, a, ip());
    expect((await call(gw.url, 'GET', '/api/keys', { cookie: oldSession })).status).toBe(200);

    // An unknown address gets the very same answer, and no mail.
    const unknown = email();
    const since = sink.mails.length;
    const unknownRes = await call(gw.url, 'POST', '/api/auth/password-reset', { body: { email: unknown }, headers: { 'x-forwarded-for': ip() } });
    const knownRes = await call(gw.url, 'POST', '/api/auth/password-reset', { body: { email: a.email.toUpperCase() }, headers: { 'x-forwarded-for': ip() } });
    expect(unknownRes.status).toBe(202);
    expect(knownRes.status).toBe(202);
    expect(await unknownRes.text()).toBe(await knownRes.text());

    const mail = await sink.waitFor(a.email, { since, subject: /Reset your Model Gateway password/ });
    const link = linkIn(mail, `${gw.url}/reset-password?token=`);
    const token = decodeURIComponent(new URL(link).searchParams.get('token')!);
    // Stored hashed: the token itself is nowhere in the database.
    const db = await getDb();
    const rows = await db.passwordReset.findMany({ where: { userId: a.userId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).not.toContain(token);

    // The page behind the link offers the form.
    const page = await (await fetch(link)).text();
    expect(page).toContain('Set a new password');
    expect(page).toContain(a.email);

    // The password rules hold.
    const weak = await call(gw.url, 'POST', '/api/auth/password-reset/confirm', { body: { token, password: 'password1' } });
    expect(weak.status).toBe(400);
    expect(((await weak.json()) as ErrorBody).error.message_code).toBe('auth.password_common');

    const done = await call(gw.url, 'POST', '/api/auth/password-reset/confirm', { body: { token, password: 'fresh-meadow-77' } });
    expect(done.status, await done.clone().text()).toBe(200);
    expect((await login(gw.url, a.email, a.password)).status).toBe(401);
    expect((await login(gw.url, a.email, 'fresh-meadow-77')).status).toBe(200);
    // The session signed in before the reset is over.
    expect((await call(gw.url, 'GET', '/api/keys', { cookie: oldSession })).status).toBe(401);

    // Used once: refused again, and the page says so.
    const reuse = await call(gw.url, 'POST', '/api/auth/password-reset/confirm', { body: { token, password: 'another-meadow-78' } });
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as ErrorBody).error.message_code).toBe('auth.reset_invalid');
    expect(await (await fetch(link)).text()).toContain('not valid or was already used');
    expect((await login(gw.url, a.email, 'fresh-meadow-77')).status).toBe(200);

    // An expired link is refused.
    const since2 = sink.mails.length;
    expect((await call(gw.url, 'POST', '/api/auth/password-reset', { body: { email: a.email }, headers: { 'x-forwarded-for': ip() } })).status).toBe(202);
    const second = await sink.waitFor(a.email, { since: since2, subject: /Reset your Model Gateway password/ });
    const token2 = decodeURIComponent(new URL(linkIn(second, `${gw.url}/reset-password?token=`)).searchParams.get('token')!);
    await db.passwordReset.updateMany({ where: { userId: a.userId, usedAt: null }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await call(gw.url, 'POST', '/api/auth/password-reset/confirm', { body: { token: token2, password: 'late-meadow-79' } });
    expect(expired.status).toBe(400);
    expect(((await expired.json()) as ErrorBody).error.message_code).toBe('auth.reset_expired');
    expect((await login(gw.url, a.email, 'late-meadow-79')).status).toBe(401);

    // Nothing ever went to the unknown address.
    expect(sink.mails.some((m) => m.to.includes(unknown))).toBe(false);
  });

  it('password reset without SMTP: the API and the page say mail is not set up; the operator sets the password', async () => {
    const res = await call(plain.url, 'POST', '/api/auth/password-reset', { body: { email: email() }, headers: { 'x-forwarded-for': ip() } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as ErrorBody).error.message_code).toBe('mail.not_configured');
    // The operator sets the password instead (CLI), which ends the account's sessions.
    const a = await createAccount({});
    const session = await signIn(plain.url, a, ip());
    const weak = promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'set-password', '--email', a.email, '--password', 'short'], {
      cwd: ROOT,
      env: process.env,
    });
    await expect(weak).rejects.toThrow(/at least 8 characters/);
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/admin.ts', 'set-password', '--email', a.email, '--password', 'operator-given-31'],
      {
        cwd: ROOT,
        env: process.env,
      },
    );
    expect((await login(plain.url, a.email, a.password)).status).toBe(401);
    expect((await login(plain.url, a.email, 'operator-given-31')).status).toBe(200);
    expect((await call(plain.url, 'GET', '/api/keys', { cookie: session })).status).toBe(401);

    const page = await (await fetch(`${plain.url}/forgot-password`)).text();
    expect(page).toContain('data-testid="mail-not-configured"');
    const zh = await (await fetch(`${plain.url}/forgot-password`, { headers: { 'accept-language': 'zh-CN' } })).text();
    expect(zh).toContain('此网关未配置邮件发送');
  });

  it('email verification: redeem and recharge wait for the mailed link; the billing page offers resend', async () => {
    const e = email();
    const since = sink.mails.length;
    const { cookie } = await register(gw.url, e, { 'accept-language': 'zh-CN,zh;q=0.9' });
    // Mailed in the language the account signed up in.
    const mail = await sink.waitFor(e, { since, subject: /验证你的 Model Gateway 邮箱/ });
    const link = linkIn(mail, `${gw.url}/api/auth/verify-email?token=`);

    const code = await newCode();
    const refused = await call(gw.url, 'POST', '/api/payment/redeem', { cookie, body: { code } });
    expect(refused.status).toBe(403);
    const err = ((await refused.json()) as ErrorBody).error;
    expect(err.code).toBe('forbidden');
    expect(err.message_code).toBe('email.unverified');
    expect(err.message).toMatch(/Verify your email address first/);
    const recharge = await call(gw.url, 'POST', '/api/payment/recharge', { cookie, body: { amount_usd: '10' } });
    expect(recharge.status).toBe(403);
    expect(((await recharge.json()) as ErrorBody).error.message_code).toBe('email.unverified');

    const billing = await (await call(gw.url, 'GET', '/dashboard/billing', { cookie })).text();
    expect(billing).toContain('data-testid="verify-email-banner"');

    // Resend sends another link.
    const since2 = sink.mails.length;
    const resent = await call(gw.url, 'POST', '/api/account/verify-email', { cookie });
    expect(resent.status, await resent.clone().text()).toBe(200);
    expect(await resent.json()).toEqual({ verified: false, sent: true });
    await sink.waitFor(e, { since: since2 });

    // A tampered link does nothing.
    const bad = await fetch(
      link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      { redirect: 'manual' },
    );
    expect(bad.headers.get('location')).toMatch(/\/dashboard\/billing\?email=invalid$/);
    expect((await call(gw.url, 'POST', '/api/payment/redeem', { cookie, body: { code } })).status).toBe(403);

    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toMatch(/\/dashboard\/billing\?email=verified$/);

    const redeemed = await call(gw.url, 'POST', '/api/payment/redeem', { cookie, body: { code } });
    expect(redeemed.status, await redeemed.clone().text()).toBe(200);
    expect(((await redeemed.json()) as { credited_usd: string }).credited_usd).toBe('1');
    // Recharge passes the gate now (this deployment has no Stripe: 503, not 403).
    expect((await call(gw.url, 'POST', '/api/payment/recharge', { cookie, body: { amount_usd: '10' } })).status).toBe(503);
    const after = await (await call(gw.url, 'GET', '/dashboard/billing?email=verified', { cookie })).text();
    expect(after).not.toContain('data-testid="verify-email-banner"');
    expect(after).toContain('data-testid="email-verified"');
  });

  it('accounts made by the operator and accounts under verification off are not gated', async () => {
    // Operator-made (CLI/console) accounts count as verified.
    const a = await createAccount({});
    const cookie = await signIn(gw.url, a, ip());
    expect((await call(gw.url, 'POST', '/api/payment/redeem', { cookie, body: { code: await newCode() } })).status).toBe(200);

    // Off by default: a fresh sign-up redeems at once, and its billing page shows no banner.
    const { cookie: fresh } = await register(plain.url, email());
    expect((await call(plain.url, 'POST', '/api/payment/redeem', { cookie: fresh, body: { code: await newCode() } })).status).toBe(200);
    expect(await (await call(plain.url, 'GET', '/dashboard/billing', { cookie: fresh })).text()).not.toContain('verify-email-banner');
  });

  // Last: it stops the sink.
  it('an SMTP server that does not answer fails no request: the invitation answers mailed false with its link', async () => {
    await sink.close();
    sinkClosed = true;
    const owner = await createAccount({ tier: 'pro' });
    const cookie = await signIn(gw.url, owner, ip());
    const org = (await (await call(gw.url, 'POST', '/api/orgs', { cookie, body: { name: 'Down Mail' } })).json()) as { id: string };
    const res = await call(gw.url, 'POST', `/api/orgs/${org.id}/invitations`, { cookie, body: { email: email(), role: 'admin' } });
    expect(res.status, await res.clone().text()).toBe(201);
    const body = (await res.json()) as { link: string; mailed: boolean };
    expect(body.mailed).toBe(false);
    expect(body.link).toMatch(/\/invite\//);
    expect((await call(gw.url, 'POST', '/api/auth/password-reset', { body: { email: owner.email }, headers: { 'x-forwarded-for': ip() } })).status).toBe(202);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });
});
