// Password reset in Chromium on a phone-sized screen against the production build and a local SMTP
// sink: "Forgot password?" on the login page → ask for the link → open the mailed link → set a new
// password → log in with it. Every page of the flow is axe-clean. Then, with verification required, a
// new sign-up sees the billing banner and its "resend" sends the link again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount } from '../support/accounts';
import { axeProblems } from '../support/axe';
import { linkIn, startSmtpSink, type SmtpSink } from '../support/smtp-sink';
import { getDb } from '@/lib/db';
import { randomBytes } from 'node:crypto';

let gw: RunningGateway;
let fake: FakeUpstream;
let sink: SmtpSink;
let browser: Browser;

beforeAll(async () => {
  fake = await startFakeUpstream();
  sink = await startSmtpSink();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], overrides: { auth: { require_email_verification: true } } }),
    env: { TRUST_PROXY: '1', SMTP_URL: sink.url },
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
  await sink?.close();
  await (await getDb()).$disconnect();
});

async function phonePage(ip: string): Promise<Page> {
  return browser.newPage({
    viewport: { width: 390, height: 844 },
    locale: 'en-US',
    extraHTTPHeaders: { 'x-forwarded-for': ip, 'accept-language': 'en-US,en;q=0.9' },
  });
}

describe('password reset in the browser', { timeout: 120_000 }, () => {
  it('forgot password → mailed link → new password → log in', async () => {
    const a = await createAccount({});
    const page = await phonePage('10.79.0.1');
    await page.goto(`${gw.url}/login`);
    await page.getByTestId('forgot-password').click();
    await page.waitForURL(/\/forgot-password$/);
    expect(await axeProblems(page)).toEqual([]);
    const since = sink.mails.length;
    await page.fill('#email', a.email);
    await page.getByTestId('reset-request-submit').click();
    await expect.poll(() => page.getByTestId('reset-requested').isVisible()).toBe(true);
    expect(await page.getByTestId('reset-requested').textContent()).toContain(a.email);
    expect(await axeProblems(page)).toEqual([]);

    const mail = await sink.waitFor(a.email, { since });
    await page.goto(linkIn(mail, `${gw.url}/reset-password?token=`));
    expect(await page.locator('h1').textContent()).toBe('Set a new password');
    expect(await axeProblems(page)).toEqual([]);
    // The sign-up rules, said at the field before anything is sent.
    await page.fill('#new-password', 'short');
    await page.getByTestId('reset-submit').click();
    await expect.poll(() => page.getByTestId('auth-error').textContent()).toContain('at least 8 characters');
    await page.fill('#new-password', 'brand-new-lantern-5');
    await page.getByTestId('reset-submit').click();
    await page.waitForURL(/\/login\?reset=done$/);
    expect(await page.getByTestId('reset-done').isVisible()).toBe(true);

    await page.fill('#email', a.email);
    await page.fill('#password', 'brand-new-lantern-5');
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/dashboard$/);
    await page.close();
  });

  it('without a verified email the billing page shows the banner, and resend mails the link', async () => {
    const page = await phonePage('10.79.0.2');
    const email = `e2e-${randomBytes(5).toString('hex')}@example.com`;
    await page.goto(`${gw.url}/register`);
    await page.fill('#email', email);
    await page.fill('#password', 'sturdy-pass-42');
    await page.getByTestId('register-submit').click();
    await page.waitForURL(/\/dashboard$/);
    await sink.waitFor(email);
    await page.goto(`${gw.url}/dashboard/billing`);
    const banner = page.getByTestId('verify-email-banner');
    expect(await banner.isVisible()).toBe(true);
    expect(await axeProblems(page)).toEqual([]);
    const since = sink.mails.length;
    await page.getByTestId('verify-email-resend').click();
    await expect.poll(() => banner.textContent()).toContain('Sent. Check your inbox');
    const again = await sink.waitFor(email, { since });
    await page.goto(linkIn(again, `${gw.url}/api/auth/verify-email?token=`));
    await page.waitForURL(/\/dashboard\/billing\?email=verified$/);
    expect(await page.getByTestId('email-verified').isVisible()).toBe(true);
    expect(await page.getByTestId('verify-email-banner').count()).toBe(0);
    await page.close();
  });
});
