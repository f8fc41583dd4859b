// Chinese in a real browser against the production build: after switching to 中文, every dashboard
// page and every public page says <html lang="zh-CN"> and shows none of the English interface
// labels below (code samples and monospace identifiers such as header and model names are not
// interface text and are skipped).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let page: Page;

/** English labels that must not survive on a Chinese page. */
const ENGLISH_LABELS = [
  'Overview',
  'Keys',
  'Usage',
  'Logs',
  'Billing',
  'Alerts',
  'Models',
  'Playground',
  'Settings',
  'Log out',
  'Create key',
  'Create a key',
  'Your keys',
  'Revoke',
  'Edit',
  'Copy',
  'Cancel',
  'Never',
  'Balance',
  'Requests',
  'Spend',
  'Status',
  'Latency',
  'Tokens',
  'Export CSV',
  'Apply',
  'Add credit',
  'History',
  'Redeem',
  'Attempts',
  'Routing',
  'Context',
  'Limits',
  'Change password',
  'Delete account',
  'Send',
  'Reply',
  'Recent alerts',
  'Pricing',
  'Docs',
  'Dashboard',
  'Sign up',
  'Log in',
  'Tiers',
  'Not found',
  'Page not found',
  'Network error',
  'No requests',
];

/** The English labels in the page's text, outside code samples. */
async function englishLeft(): Promise<string[]> {
  const text = await page.evaluate(() => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const parts: string[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement?.closest('pre, code, .font-mono, script, style, noscript, template')) continue;
      parts.push(n.textContent ?? '');
    }
    return parts.join(' | ');
  });
  return ENGLISH_LABELS.filter((label) => new RegExp(`(^|[^A-Za-z])${label}([^A-Za-z]|$)`).test(text));
}

async function expectChinese(name: string) {
  expect(await page.getAttribute('html', 'lang'), name).toBe('zh-CN');
  expect(await englishLeft(), `English left on ${name}`).toEqual([]);
  await page.screenshot({ path: path.join(shots, `zh-${name}.png`), fullPage: true });
}

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
  // An English-speaking browser with its own client address (the per-IP sign-up limit is not shared).
  page = await browser.newPage({
    viewport: { width: 1280, height: 860 },
    locale: 'en-US',
    extraHTTPHeaders: { 'x-forwarded-for': '10.78.0.1', 'accept-language': 'en-US,en;q=0.9' },
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
});

describe('the interface in Chinese', { timeout: 90_000 }, () => {
  const email = `i18n-${Date.now()}@example.com`;
  let apiKey = '';
  let logPath = '';

  it('signs up in English, then switches to 中文 from the header', async () => {
    await page.goto(`${gw.url}/register`);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await page.fill('#email', email);
    await page.fill('#password', 'sturdy-pass-42');
    await page.getByTestId('register-submit').click();
    await page.waitForURL(`${gw.url}/dashboard`, { waitUntil: 'commit' });
    await page.locator('header [data-testid="language-switch"]').selectOption('zh-CN');
    await page.waitForFunction(() => document.querySelector('nav[aria-label="Dashboard"]')?.textContent?.includes('概览'));
    await page.reload();
    await expectChinese('overview');
  });

  it('creates a key in Chinese, with Chinese client-side messages', async () => {
    await page.goto(`${gw.url}/dashboard/keys`);
    await expectChinese('keys-empty');
    await page.getByTestId('key-name').fill('k1');
    await page.getByTestId('create-key').click();
    apiKey = (await page.getByTestId('new-key').textContent())!.trim();
    expect(apiKey).toMatch(/^sk-gw-/);
    await expect(page.getByTestId('new-key-panel').textContent()).resolves.toContain('立即复制新密钥');
    await expectChinese('keys-created');
    // A refused call (no credit) is logged, so the logs, usage and log detail pages have a row.
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(402);
  });

  it('shows every dashboard page in Chinese', async () => {
    for (let i = 0; i < 20; i++) {
      await page.goto(`${gw.url}/dashboard/logs`);
      if ((await page.getByTestId('log-row').count()) > 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    logPath = new URL((await page.getByTestId('log-row').first().locator('a').first().getAttribute('href'))!, gw.url).pathname;
    await expectChinese('logs');
    const pages: [string, string][] = [
      ['log-detail', logPath],
      ['usage', '/dashboard/usage'],
      ['usage-by-model', '/dashboard/usage?group_by=model'],
      ['usage-by-key', '/dashboard/usage?group_by=key&metric=failed'],
      ['logs-filtered-empty', '/dashboard/logs?status=429'],
      ['billing', '/dashboard/billing'],
      ['models', '/dashboard/models'],
      ['playground', '/dashboard/playground'],
      ['settings', '/dashboard/settings'],
      ['alerts', '/dashboard/alerts'],
      ['dashboard-404', '/dashboard/logs/req_not_a_real_one'],
    ];
    for (const [name, p] of pages) {
      await page.goto(`${gw.url}${p}`);
      await expectChinese(name);
    }
  });

  it('shows the public pages in Chinese', async () => {
    for (const [name, p] of [
      ['landing', '/'],
      ['pricing', '/pricing'],
      ['docs', '/docs'],
      ['404', '/no-such-page'],
    ] as const) {
      await page.goto(`${gw.url}${p}`);
      await expectChinese(name);
    }
  });

  it('answers form mistakes and confirmations in Chinese', async () => {
    await page.goto(`${gw.url}/dashboard/settings`);
    await page.getByTestId('change-password').click();
    await expect(page.getByTestId('password-outcome').textContent()).resolves.toBe('请输入当前密码。');

    await page.goto(`${gw.url}/dashboard/playground`);
    await page.getByTestId('pg-prompt').fill('');
    await page.getByTestId('pg-send').click();
    await expect(page.getByTestId('pg-prompt-error').textContent()).resolves.toBe('请先输入一条消息。');

    await page.goto(`${gw.url}/dashboard/alerts`);
    await page.getByTestId('alert-thresholds').fill('50, 80');
    await page.getByTestId('alert-save').click();
    await expect(page.getByTestId('alert-message').textContent()).resolves.toBe('已保存。');
    await expectChinese('alerts-saved');

    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByTestId('revoke-key').click();
    const dialog = page.locator('dialog[open]');
    await expect(dialog.textContent()).resolves.toContain('无法撤销');
    expect(await englishLeft()).toEqual([]);
    await page.getByTestId('confirm-revoke').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="key-status"]')?.textContent === '已吊销');
  });

  it('switches back to English', async () => {
    await page.goto(`${gw.url}/dashboard`);
    await page.locator('header [data-testid="language-switch"]').selectOption('en');
    await page.waitForFunction(() => document.querySelector('nav[aria-label="Dashboard"]')?.textContent?.includes('Overview'));
    await page.reload();
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await expect(page.locator('body').textContent()).resolves.toContain('Balance');
  });
});
