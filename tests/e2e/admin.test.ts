// The operator console in a real browser (Debian's Chromium through playwright-core) against the
// production build: sign in as admin, credit an account, disable a channel and see traffic move,
// create a code and redeem it as a user, a non-admin refused. Screenshots of every admin page land
// in test-output/screenshots (admin-*.png).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { signIn as signInAs, signUp as signUpAs } from '../support/browser';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake1: FakeUpstream;
let fake2: FakeUpstream;
let browser: Browser;
let adminContext: BrowserContext;
let page: Page;
const adminEmail = `ops-e2e-${randomBytes(4).toString('hex')}@example.com`;
const password = 'sturdy-pass-42';
let customer: TestAccount;
/** The confirmations the operator was asked, in order (each accepted). */
const dialogs: string[] = [];

const shot = (p: Page, name: string) => p.screenshot({ path: path.join(shots, `admin-${name}.png`), fullPage: true });

const signUp = (p: Page, email: string) => signUpAs(p, gw.url, email, password);
const signIn = (p: Page, email: string) => signInAs(p, gw.url, email, password);

const chat = (apiKey: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  fake1 = await startFakeUpstream();
  fake2 = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ channelPrefix: 'adme-', openaiUrls: [fake1.url, fake2.url] }),
    env: { STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '', TRUST_PROXY: '1' },
  });
  customer = await createAccount();
  // The first operator is made from the shell (a listed email registered on the web stays a user).
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'create-user', '--email', adminEmail, '--password', password], {
    cwd: ROOT,
    env: { ...process.env, ADMIN_EMAILS: adminEmail },
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 }, extraHTTPHeaders: { 'x-forwarded-for': '10.78.0.1' } });
  page = await adminContext.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await Promise.all([fake1?.close(), fake2?.close()]);
});

describe('operator console in a browser', { timeout: 60_000 }, () => {
  it('refuses a non-admin with 403 and shows no Admin link', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, extraHTTPHeaders: { 'x-forwarded-for': '10.78.0.2' } });
    const p = await ctx.newPage();
    const anon = await p.goto(`${gw.url}/admin`);
    expect(anon!.status()).toBe(401);
    await shot(p, '00-unauthorized');
    await signUp(p, `plain-${randomBytes(4).toString('hex')}@example.com`);
    await expect(p.getByTestId('admin-link').count()).resolves.toBe(0);
    const res = await p.goto(`${gw.url}/admin/accounts`);
    expect(res!.status()).toBe(403);
    await p.getByTestId('forbidden').waitFor();
    await shot(p, '01-forbidden');
    await ctx.close();
  });

  it('signs in as the operator the CLI made (ADMIN_EMAILS) and reaches the console from the dashboard', async () => {
    await signIn(page, adminEmail);
    await page.getByTestId('admin-link').click();
    await page.waitForURL(`${gw.url}/admin`, { waitUntil: 'commit' });
    await page.getByTestId('admin-windows').waitFor();
    await shot(page, '02-overview');
  });

  it('finds an account and credits it; the key works at once', async () => {
    expect((await chat(customer.apiKey)).status).toBe(402);
    await page.goto(`${gw.url}/admin/accounts`);
    await page.getByTestId('account-search').fill(customer.email);
    await page.getByTestId('account-search').press('Enter');
    await page.waitForURL(/q=/, { waitUntil: 'commit' });
    // 'commit' is before the filtered list renders; on a loaded machine the count would read the old page.
    await page.getByTestId('account-row').filter({ hasText: customer.email }).waitFor();
    await waitFor(async () => (await page.getByTestId('account-row').count()) === 1, 10_000);
    await shot(page, '03-accounts');
    await page.getByRole('link', { name: customer.email }).click();
    await page.waitForURL(/\/admin\/accounts\/[0-9a-f-]{36}/, { waitUntil: 'commit' });
    await page.getByTestId('amount').fill('4.5');
    await page.getByTestId('note').fill('welcome credit');
    await page.getByTestId('credit').click();
    await page.getByTestId('admin-done').waitFor();
    await waitFor(async () => ((await page.getByTestId('admin-balance').textContent()) ?? '').includes('4.50'), 10_000);
    expect((await chat(customer.apiKey)).status).toBe(200);
    await page.reload();
    await expect(page.getByTestId('admin-ledger-row').filter({ hasText: 'welcome credit' }).count()).resolves.toBe(1);
    await shot(page, '04-account');
  });

  it('disables a channel and traffic moves to the other one', async () => {
    expect((await chat(customer.apiKey)).headers.get('x-service-provider')).toBe('adme-openai-1');
    await page.goto(`${gw.url}/admin/channels`);
    const row = page.locator('[data-channel="adme-openai-1"]');
    await expect(row.textContent()).resolves.not.toContain('upstream-secret');
    await row.getByTestId('test').click();
    await expect(row.getByTestId('test-result').textContent()).resolves.toMatch(/OK/);
    await row.getByTestId('disable').click();
    await row.getByTestId('enable').waitFor();
    // Asked first, naming the effect: its models have another channel, so their traffic moves.
    expect(dialogs.at(-1)).toBe('Disable channel "adme-openai-1" on every instance? Its traffic moves to the other enabled channels of its models.');
    await expect(row.getByTestId('channel-state').textContent()).resolves.toMatch(/disabled/);
    await shot(page, '05-channels-disabled');
    await waitFor(async () => (await chat(customer.apiKey)).headers.get('x-service-provider') === 'adme-openai-2', 10_000);
    const before = fake1.requests.length;
    for (let i = 0; i < 3; i++) expect((await chat(customer.apiKey)).headers.get('x-service-provider')).toBe('adme-openai-2');
    expect(fake1.requests.length).toBe(before);
    await row.getByTestId('enable').click();
    await row.getByTestId('disable').waitFor();
    await waitFor(async () => (await chat(customer.apiKey)).headers.get('x-service-provider') === 'adme-openai-1', 10_000);
  });

  it("sets a channel's limits on the channels page: a bad value is refused naming the field, a tightening asks first, routing follows, the config again", async () => {
    await page.goto(`${gw.url}/admin/channels`);
    const card = page.locator('[data-limits-channel="adme-openai-1"]');
    await expect(card.getByTestId('limit-concurrency-now').textContent()).resolves.toBe('no limit (not counted)');
    const asked = dialogs.length;
    await card.getByTestId('limit-concurrency').fill('0');
    await card.getByTestId('limit-tpm').fill('12k');
    await card.getByTestId('save-limits').click();
    await expect(page.locator('#limit-concurrency-adme-openai-1-error').textContent()).resolves.toBe(
      "Concurrency must be a whole number from 1 to 100000, or empty for the operator config's limit.",
    );
    await expect(page.locator('#limit-tpm-adme-openai-1-error').textContent()).resolves.toMatch(/^Tokens per minute must be a whole number from 1 to/);
    expect(await card.getByTestId('limit-concurrency').getAttribute('aria-invalid')).toBe('true');
    expect(dialogs.length).toBe(asked);
    await card.getByTestId('limit-concurrency').fill('1');
    await card.getByTestId('limit-tpm').fill('');
    await card.getByTestId('save-limits').click();
    await waitFor(async () => ((await card.getByTestId('limit-concurrency-now').textContent()) ?? '').startsWith('0 of 1'), 10_000);
    // A new limit where there was none tightens: asked first, naming the change and its effect.
    expect(dialogs.at(-1)).toBe(
      'Tighten the limits of channel "adme-openai-1" on every instance? Concurrency: no limit → 1 (now 0). Requests beyond them go to the other channels of their model, or get a 429 naming this channel when none has room.',
    );
    await expect(card.getByTestId('limit-concurrency-now').textContent()).resolves.toBe('0 of 1 · set in the console');
    await expect(page.locator('#limit-concurrency-adme-openai-1-error').count()).resolves.toBe(0);
    expect((await chat(customer.apiKey)).headers.get('x-service-provider')).toBe('adme-openai-1');
    await shot(page, '05b-channel-limits');
    // Back to the config (no limit): loosening asks nothing.
    const before = dialogs.length;
    await card.getByTestId('reset-limits').click();
    await waitFor(async () => (await card.getByTestId('limit-concurrency-now').textContent()) === 'no limit (not counted)', 10_000);
    expect(dialogs.length).toBe(before);
    await expect(card.getByTestId('reset-limits').count()).resolves.toBe(0);
  });

  it('creates codes, and a user redeems one on the billing page', async () => {
    await page.goto(`${gw.url}/admin/codes`);
    await page.getByTestId('code-amount').fill('2');
    await page.getByTestId('code-count').fill('3');
    await page.getByTestId('create-codes').click();
    const codes = ((await page.getByTestId('new-codes').textContent()) ?? '').trim().split('\n');
    expect(codes).toHaveLength(3);
    const download = page.waitForEvent('download');
    await page.getByTestId('download-codes').click();
    expect((await download).suggestedFilename()).toMatch(/^codes-.*\.csv$/);
    await shot(page, '06-codes-created');

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, extraHTTPHeaders: { 'x-forwarded-for': '10.78.0.3' } });
    const user = await ctx.newPage();
    await signUp(user, `redeemer-${randomBytes(4).toString('hex')}@example.com`);
    await user.goto(`${gw.url}/dashboard/billing`);
    await user.getByTestId('redeem-code').fill(codes[0]);
    await user.getByTestId('redeem-submit').click();
    await expect(user.getByTestId('redeem-message').textContent()).resolves.toMatch(/\$2\.00 added/);
    await user.getByTestId('redeem-code').fill(codes[0]);
    await user.getByTestId('redeem-submit').click();
    await expect(user.getByTestId('redeem-message').textContent()).resolves.toMatch(/already been redeemed/);
    await shot(user, '07-user-redeemed');
    await ctx.close();

    await page.goto(`${gw.url}/admin/codes`);
    await expect(page.getByTestId('batch-redeemed').first().textContent()).resolves.toMatch(/1 \/ 3/);
    await page.getByTestId('batch-row').first().getByRole('link').click();
    await page.waitForURL(/\/admin\/codes\/[0-9a-f-]{36}/, { waitUntil: 'commit' });
    await expect(page.getByTestId('code-row').count()).resolves.toBe(3);
    await shot(page, '08-code-batch');
  });

  it('filters the logs of every account and posts an announcement users see', async () => {
    await page.goto(`${gw.url}/admin/logs?account=${encodeURIComponent(customer.email)}`);
    await waitFor(async () => {
      await page.reload();
      return (await page.getByTestId('admin-log-row').count()) > 0;
    }, 10_000);
    await shot(page, '11-logs');
    await page.getByTestId('admin-log-row').first().getByRole('link').click();
    await page.waitForURL(/\/admin\/logs\/req_/, { waitUntil: 'commit' });
    await page.getByTestId('attempts').waitFor();
    await shot(page, '12-log-detail');

    await page.goto(`${gw.url}/admin/announcements`);
    await page.getByTestId('announcement-message').fill('Scheduled maintenance on Sunday 02:00-03:00 UTC');
    await page.getByTestId('post-announcement').click();
    await page.getByTestId('current-announcement').waitFor();
    await shot(page, '13-announcements');
    await page.goto(`${gw.url}/dashboard`);
    await expect(page.getByTestId('announcement').textContent()).resolves.toContain('Scheduled maintenance');
    await shot(page, '14-dashboard-announcement');
  });

  it('shows every action in the audit log', async () => {
    await page.goto(`${gw.url}/admin/audit`);
    const text = (await page.textContent('body'))!;
    for (const action of [
      'account.set_role',
      'account.credit',
      'channel.test',
      'channel.disable',
      'channel.enable',
      'redemption.create_batch',
      'announcement.post',
    ])
      expect(text).toContain(action);
    await shot(page, '09-audit');
    await page.goto(`${gw.url}/admin`);
    await shot(page, '02-overview');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${gw.url}/admin`);
    await shot(page, '10-overview-phone');
    // Channel health on a phone: each channel's card (state, reason) fits the screen, nothing scrolls sideways but the table.
    await page.goto(`${gw.url}/admin/channels`);
    const cards = page.getByTestId('channel-health');
    expect(await cards.count()).toBe(2);
    expect(await cards.first().getByTestId('health-state').innerText()).toBe('healthy');
    const box = (await cards.first().boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await shot(page, '11-channels-phone');
    await page.setViewportSize({ width: 1280, height: 860 });
  });
});
