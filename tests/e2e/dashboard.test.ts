// The dashboard in a real browser (Debian's Chromium through playwright-core) against the
// production build. Screenshots of every page land in test-output/screenshots for review.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { axeProblems } from '../support/axe';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { usdToPico } from '@/lib/money';
import { formatMoney } from '@/lib/format';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let page: Page;

const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  fake = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url] }),
    env: { STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '', TRUST_PROXY: '1', NEXTAUTH_URL: '', PUBLIC_BASE_URL: '', SUPPORT_CONTACT: 'ops@example.test' },
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  // Its own client address, so the per-IP sign-up and login limits are not shared with other test files.
  // A viewer in China: times are shown in the viewer's zone (UTC+8), UTC on hover.
  page = await browser.newPage({ viewport: { width: 1280, height: 860 }, timezoneId: 'Asia/Shanghai', extraHTTPHeaders: { 'x-forwarded-for': '10.77.0.1' } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
});

describe('dashboard in a browser', { timeout: 60_000 }, () => {
  const email = `browser-${Date.now()}@example.com`;
  const password = 'sturdy-pass-42';
  let apiKey = '';
  let logUrl = '';

  it('shows the landing page with the base URL and sign-up', async () => {
    await page.goto(gw.url);
    await expect(page.getByTestId('base-url').textContent()).resolves.toContain(`${gw.url}/v1`);
    await shot('01-landing');
  });

  it('signs up and lands on the overview with the free tier', async () => {
    await page.goto(`${gw.url}/register`);
    await page.fill('#email', email);
    // The browser refuses what the server would, without spending the per-IP sign-up allowance.
    const registerCalls: string[] = [];
    const onRequest = (r: { url(): string }) => r.url().includes('/api/auth/register') && registerCalls.push(r.url());
    page.on('request', onRequest);
    await page.fill('#password', 'password123');
    await page.getByTestId('register-submit').click();
    await expect(page.getByTestId('auth-error').textContent()).resolves.toMatch(/commonly used/);
    await page.fill('#email', 'not-an-email');
    await page.fill('#password', password);
    await page.getByTestId('register-submit').click();
    await expect(page.getByTestId('auth-error').textContent()).resolves.toMatch(/valid email/);
    expect(registerCalls).toEqual([]);
    page.off('request', onRequest);
    await page.fill('#email', email);
    await shot('02-register-error');
    await page.fill('#password', password);
    await page.getByTestId('register-submit').click();
    await page.waitForURL(`${gw.url}/dashboard`, { waitUntil: 'commit' });
    await expect(page.getByTestId('tier').textContent()).resolves.toMatch(/free/i);
    await expect(page.locator('[data-testid="first-run-step"][data-done="false"]').count()).resolves.toBe(3);
    await shot('03-overview-empty');
  });

  it('creates a key and shows it once', async () => {
    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByTestId('key-name').fill('browser key');
    await page.getByTestId('create-key').click();
    apiKey = (await page.getByTestId('new-key').textContent())!.trim();
    expect(apiKey).toMatch(/^sk-gw-[0-9A-Za-z]{43}$/);
    await expect(page.getByTestId('key-row').count()).resolves.toBe(1);
    // Ready-to-paste first calls with the key filled in: curl first, Python on its tab.
    const snippet = () => page.getByTestId('key-snippets').locator('pre').textContent();
    await expect(snippet()).resolves.toContain(`Authorization: Bearer ${apiKey}`);
    await expect(snippet()).resolves.toContain(`${gw.url}/v1/chat/completions`);
    await page.getByRole('tab', { name: 'Python' }).click();
    await expect(snippet()).resolves.toContain(`OpenAI(base_url="${gw.url}/v1", api_key="${apiKey}")`);
    await shot('04-keys-created');
  });

  it('a call with the key appears in the request logs with its cost', async () => {
    // A free account with no balance is refused (402) and that is logged too.
    const refused = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).toBe(402);
    const { stdout } = await import('node:child_process').then(({ execFileSync }) => ({
      stdout: execFileSync(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'credit', '--email', email, '--usd', '2'], {
        cwd: ROOT,
        env: process.env,
      }).toString(),
    }));
    expect(stdout).toContain('balanceUsd');
    // The credit is in the live balance at once ("live":"applied"), or within CREDIT_RECONCILE_MS
    // (1 s) when the CLI could not reach Redis in time ("pending"): allow that, as documented.
    const call = () =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the browser test' }] }),
      });
    let res = await call();
    for (let i = 0; i < 20 && res.status === 402 && stdout.includes('"pending"'); i++) {
      await new Promise((r) => setTimeout(r, 250));
      res = await call();
    }
    expect(res.status, `${stdout} ${res.status === 200 ? '' : await res.clone().text()}`).toBe(200);
    const cost = res.headers.get('x-service-cost-usd')!;
    expect(Number(cost)).toBeGreaterThan(0);

    let rows = 0;
    for (let i = 0; i < 40 && rows < 2; i++) {
      await page.goto(`${gw.url}/dashboard/logs`);
      rows = await page.getByTestId('log-row').count();
      if (rows < 2) await page.waitForTimeout(250);
    }
    expect(rows).toBe(2);
    const newest = page.getByTestId('log-row').first();
    await expect(newest.textContent()).resolves.toContain('gpt-4o-mini');
    await shot('05-logs');
    await newest.click();
    await page.waitForURL(/\/dashboard\/logs\/req_/, { waitUntil: 'commit' });
    const shown = (await page.getByTestId('cost-usd').first().textContent())!;
    expect(shown).toBe(formatMoney(usdToPico(cost))); // every digit of the header's exact figure
    // The price breakdown: each token class at its rate, adding up to the same figure.
    const priceRows = page.getByTestId('price-row');
    await expect(priceRows.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-class')))).resolves.toEqual(['input', 'output']);
    await expect(priceRows.first().textContent()).resolves.toContain('$0.15'); // gpt-4o-mini's input price per 1M tokens
    await expect(page.getByTestId('price-total-usd').textContent()).resolves.toBe(shown);
    logUrl = page.url();
    const time = page.locator('main time').first();
    await page.waitForFunction(() => !document.querySelector('main time')?.textContent?.endsWith('UTC'));
    const utc = (await time.getAttribute('title'))!;
    const local = (await time.textContent())!;
    expect(new Date(`${local.replace(' ', 'T')}+08:00`).toISOString().slice(0, 19)).toBe(utc.replace(' UTC', '').replace(' ', 'T'));
    await shot('06-log-detail');
    await page.goto(`${gw.url}/dashboard`);
    await shot('07-overview-with-usage');
  });

  it('sends a streamed chat from the playground and shows the reply, its cost and latency', async () => {
    // Signed in is enough: no key to paste (tests/e2e/playground.test.ts covers the rest).
    await page.goto(`${gw.url}/dashboard/playground`);
    await page.getByTestId('pg-model').selectOption('gpt-4o-mini');
    await page.getByTestId('pg-send').click();
    await page.getByTestId('pg-turn-latency').filter({ hasText: /ms/ }).waitFor();
    expect((await page.getByTestId('pg-reply').textContent())!.length).toBeGreaterThan(0);
    await expect(page.getByTestId('pg-turn-cost').textContent()).resolves.toMatch(/^\$0\.\d+$/);
    await shot('07b-playground');
    // Key, credit and a successful call: the first-run checklist has done its job and is gone.
    await page.goto(`${gw.url}/dashboard`);
    await expect(page.getByTestId('first-run').count()).resolves.toBe(0);
  });

  it('revokes the key after confirmation and the key then gets 401', async () => {
    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByTestId('revoke-key').click();
    await shot('08-revoke-confirm');
    await page.getByTestId('confirm-revoke').click();
    await page
      .getByTestId('key-status')
      .filter({ hasText: /revoked/i })
      .first()
      .waitFor();
    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(401);
    await shot('09-keys-revoked');
  });

  it('says payments are not set up on the billing page, offers no button that would fail, and the recharge call answers 503', async () => {
    await page.goto(`${gw.url}/dashboard/billing`);
    await expect(page.getByTestId('payments-status').textContent()).resolves.toMatch(/not set up/i);
    await expect(page.getByTestId('payments-contact').textContent()).resolves.toContain('ops@example.test');
    await expect(page.getByTestId('recharge-submit').count()).resolves.toBe(0);
    const status = await page.evaluate(async () => {
      const r = await fetch('/api/payment/recharge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount_usd": 10}' });
      return { status: r.status, body: await r.json() };
    });
    expect(status.status).toBe(503);
    expect(status.body.error.code).toBe('payments_not_configured');
    await shot('10-billing');
  });

  it('lists the models of the tier and works on a phone-sized screen', async () => {
    await page.goto(`${gw.url}/dashboard/models`);
    const text = (await page.textContent('body'))!;
    expect(text).toContain('gpt-4o-mini');
    await shot('11-models');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${gw.url}/dashboard`);
    await shot('12-overview-phone');
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('shows usage by model with a CSV export', async () => {
    await page.goto(`${gw.url}/dashboard/usage?group_by=model`);
    await expect(page.getByTestId('usage-group-row').first().textContent()).resolves.toContain('gpt-4o-mini');
    // The refused call, the first call and the playground's.
    await expect(page.getByTestId('usage-requests').textContent()).resolves.toBe('Requests31 failed'); // 3 requests, the 402 one failed
    const csv = await page.evaluate(async (href) => (await fetch(href)).text(), (await page.getByTestId('usage-export').getAttribute('href'))!);
    expect(csv.split('\r\n')[0]).toMatch(/^date,group,/);
    await shot('14-usage');
  });

  it('answers a missing request with the dashboard 404', async () => {
    const res = await page.goto(`${gw.url}/dashboard/logs/req_not_a_real_one`);
    expect(res?.status()).toBe(404);
    await page.getByTestId('not-found').waitFor();
    await shot('15-not-found');
  });

  it('has no serious or critical axe-core violations on any page', async () => {
    const pages = [
      '/',
      '/pricing',
      '/docs',
      '/dashboard',
      '/dashboard/keys',
      '/dashboard/usage?group_by=model',
      '/dashboard/logs',
      new URL(logUrl).pathname,
      '/dashboard/billing',
      '/dashboard/alerts',
      '/dashboard/models',
      '/dashboard/playground',
      '/dashboard/settings',
      '/dashboard/no-such-page',
    ];
    const found: string[] = [];
    for (const path of pages) {
      await page.goto(`${gw.url}${path}`);
      for (const problem of await axeProblems(page)) found.push(`${path}: ${problem}`);
      await shot(
        `desktop-${
          new URL(path, gw.url).pathname
            .replace(/^\/$/, 'landing')
            .replace(/^\/(dashboard\/?)?/, '')
            .replace(/\//g, '-') || 'overview'
        }`,
      );
    }
    expect(found).toEqual([]);
  });

  it('switches to dark mode and back, legible either way', async () => {
    await page.goto(`${gw.url}/dashboard/usage?group_by=model`);
    await page.locator('[data-testid="theme-switch"][data-placement="header"]').selectOption('dark');
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).not.toMatch(/rgb\(248, 250, 252\)|oklch\(0\.98/);
    expect(await axeProblems(page)).toEqual([]);
    await shot('17-usage-dark');
    await page.locator('[data-testid="theme-switch"][data-placement="header"]').selectOption('system');
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined();
  });

  it('speaks Chinese to a browser that asks for it, and English again when switched', async () => {
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': '10.77.0.1', 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.5' });
    try {
      await page.goto(`${gw.url}/dashboard`);
      expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');
      await expect(page.locator('nav[aria-label="Dashboard"]').textContent()).resolves.toContain('概览');
      await shot('18-overview-zh');
      await page.locator('header [data-testid="language-switch"]').selectOption('en');
      await page.waitForFunction(() => document.querySelector('nav[aria-label="Dashboard"]')?.textContent?.includes('Overview'));
      await page.reload();
      expect(await page.getAttribute('html', 'lang')).toBe('en');
    } finally {
      await page.setExtraHTTPHeaders({ 'x-forwarded-for': '10.77.0.1' });
      await page.context().clearCookies({ name: 'lang' });
    }
  });

  it('fits every page on a 390 px phone without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const pages: [string, string][] = [
        ['overview', '/dashboard'],
        ['keys', '/dashboard/keys'],
        ['usage', '/dashboard/usage?group_by=model'],
        ['logs', '/dashboard/logs'],
        ['log-detail', new URL(logUrl).pathname],
        ['billing', '/dashboard/billing'],
        ['models', '/dashboard/models'],
        ['playground', '/dashboard/playground'],
        ['settings', '/dashboard/settings'],
        ['landing', '/'],
        ['pricing', '/pricing'],
        ['docs', '/docs'],
      ];
      for (const [name, path] of pages) {
        await page.goto(`${gw.url}${path}`);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, `${name} is ${width} px wide`).toBeLessThanOrEqual(390);
        await shot(`phone-${name}`);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  it('logs out to this origin, and a deep link comes back after logging in again', async () => {
    await page.goto(`${gw.url}/dashboard`);
    await page.getByTestId('sign-out').click();
    await page.waitForURL(`${gw.url}/`, { waitUntil: 'commit' });
    await page.goto(logUrl);
    await page.waitForURL(/\/login\?callbackUrl=/, { waitUntil: 'commit' });
    expect(await axeProblems(page)).toEqual([]);
    await shot('16-login-deep-link');
    expect(new URL(page.url()).searchParams.get('callbackUrl')).toBe(new URL(logUrl).pathname);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(logUrl, { waitUntil: 'commit' });
    // Signed in, /login goes straight on.
    await page.goto(`${gw.url}/login`);
    await page.waitForURL(`${gw.url}/dashboard`, { waitUntil: 'commit' });
  });

  it('logs out and logs back in', async () => {
    await page.context().clearCookies();
    await page.goto(`${gw.url}/dashboard`);
    await page.waitForURL(/\/login/, { waitUntil: 'commit' });
    await page.fill('#email', email);
    await page.fill('#password', 'wrong-pass-42');
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('auth-error').textContent()).resolves.toMatch(/incorrect/i);
    await shot('13-login-error');
    await page.fill('#password', password);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(`${gw.url}/dashboard`, { waitUntil: 'commit' });
  });
});
