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
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

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
    env: {
      STRIPE_SECRET_KEY: '',
      STRIPE_WEBHOOK_SECRET: '',
      TRUST_PROXY: '1',
      NEXTAUTH_URL: '',
      PUBLIC_BASE_URL: '',
      SUPPORT_CONTACT: 'ops@example.test',
      ALERT_EVAL_MS: '200',
    },
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
  await (await getDb()).$disconnect();
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
      ['statements', '/dashboard/billing/statements'],
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

/** English messages the server composes, which must not reach a Chinese page. */
const ENGLISH_MESSAGES = [
  'This code is not valid',
  'Too many failed sign-in attempts',
  'Rate limit exceeded',
  'is below your alert threshold',
  'must be a whole number',
  // The old API-speak form errors ("rpm": must be … or null.); a bare "rpm" is data the audit log shows.
  '"rpm": must',
  '"concurrency": must',
  'A code is worth more than',
  'Operator console',
  'Redemption codes',
  'Top accounts',
  'Channel health',
  'Audit log',
  'Announcements',
  'Live state across instances',
  'Set weight',
  'Save tier',
  'Recent requests',
  'Post a notice',
  'No requests match',
];

async function englishMessagesLeft(p: Page): Promise<string[]> {
  const text = (await p.locator('body').textContent()) ?? '';
  return ENGLISH_MESSAGES.filter((m) => text.includes(m));
}

/** A Chinese-speaking browser with its own client address. */
async function chinesePage(ip: string): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 860 },
    locale: 'zh-CN',
    extraHTTPHeaders: { 'x-forwarded-for': ip, 'accept-language': 'zh-CN,zh;q=0.9' },
  });
  return context.newPage();
}

async function signIn(p: Page, email: string, password: string) {
  await p.goto(`${gw.url}/login`);
  await p.fill('#email', email);
  await p.fill('#password', password);
  await p.getByTestId('login-submit').click();
  await p.waitForURL((u) => !u.pathname.startsWith('/login'), { waitUntil: 'commit' });
}

describe('server messages in Chinese', { timeout: 120_000 }, () => {
  let customer: TestAccount;
  let zh: Page;

  beforeAll(async () => {
    customer = await createAccount({ tier: 'pro', balanceUsd: '5' });
    zh = await chinesePage('10.78.1.1');
    await signIn(zh, customer.email, customer.password);
  }, 60_000);

  it('says why a redeem code is refused in Chinese', async () => {
    await zh.goto(`${gw.url}/dashboard/billing`);
    await zh.getByTestId('redeem-code').fill('GW-AAAAA-AAAAA-AAAAA-AAAAA');
    await zh.getByTestId('redeem-submit').click();
    await expect(zh.getByTestId('redeem-message').textContent()).resolves.toBe('兑换码无效。');
    expect(await englishMessagesLeft(zh)).toEqual([]);
  });

  it('names both bad fields of the key form next to them, in Chinese words', async () => {
    await zh.goto(`${gw.url}/dashboard/keys`);
    await zh.getByTestId('key-name').fill('two-mistakes');
    await zh.getByTestId('new-controls').locator('summary').click();
    await zh.getByTestId('new-rpm').fill('lots');
    await zh.getByTestId('new-concurrency').fill('0');
    await zh.getByTestId('create-key').click();
    await expect(zh.getByTestId('new-rpm-error').textContent()).resolves.toBe('请输入 1 到 1,000,000 之间的每分钟请求数（整数），或留空。');
    await expect(zh.getByTestId('new-concurrency-error').textContent()).resolves.toBe('请输入 1 到 100,000 之间的并发请求数（整数），或留空。');
    await expect(zh.getByTestId('create-error').textContent()).resolves.toBe('请检查下方标出的字段。');
    // Each message sits in its field's block, under its label.
    await expect(zh.locator('div:has(> #new-rpm)').getByTestId('new-rpm-error').count()).resolves.toBe(1);
    expect(await englishMessagesLeft(zh)).toEqual([]);
    await zh.screenshot({ path: path.join(shots, 'zh-key-form-errors.png'), fullPage: true });
  });

  it('shows an alert banner in Chinese', async () => {
    await zh.goto(`${gw.url}/dashboard/alerts`);
    await zh.getByTestId('alert-low-balance').fill('10');
    await zh.getByTestId('alert-save').click();
    await zh.getByTestId('alert-secret').waitFor();
    const banner = zh.getByTestId('alert-banner');
    for (let i = 0; i < 60 && !(await banner.isVisible()); i++) {
      await zh.waitForTimeout(300);
      await zh.goto(`${gw.url}/dashboard/keys`);
    }
    await expect(banner.textContent()).resolves.toContain('余额 $5.00 已低于提醒阈值 $10.00。');
    expect(await englishMessagesLeft(zh)).toEqual([]);
    await zh.goto(`${gw.url}/dashboard/alerts`);
    await expect(zh.getByTestId('alert-event').first().textContent()).resolves.toContain('已低于提醒阈值');
  });

  it('says the login throttle in Chinese', async () => {
    const p = await chinesePage('10.78.2.2');
    await p.goto(`${gw.url}/login`);
    const email = `throttled-${Date.now()}@example.com`;
    let text = '';
    // 10 failures per account and address (and 10 sign-ins per address a minute): the 11th is refused.
    for (let i = 0; i < 12 && !text.includes('秒后重试'); i++) {
      await p.fill('#email', email);
      await p.fill('#password', `wrong-password-${i}`);
      const answered = p.waitForResponse((r) => r.url().includes('/api/auth/callback/credentials'));
      await p.getByTestId('login-submit').click();
      await answered;
      await p.waitForFunction(() => document.querySelector('[data-testid="auth-error"]') && !document.querySelector('[data-testid="login-submit"][disabled]'));
      text = (await p.getByTestId('auth-error').textContent()) ?? '';
    }
    expect(text).toMatch(/^(此账户从该地址登录失败次数过多|此地址登录失败次数过多|操作过于频繁)，请 \d+ 秒后重试。$/);
    expect(await englishMessagesLeft(p)).toEqual([]);
    await p.context().close();
  });
});

describe('the operator console in Chinese', { timeout: 120_000 }, () => {
  const adminEmail = `i18n-op-${Date.now()}@example.com`;
  const adminPassword = 'operator-pass-42';
  let op: Page;

  beforeAll(async () => {
    // The first operator is made from the shell, as in the admin test.
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'create-user', '--email', adminEmail, '--password', adminPassword], {
      cwd: ROOT,
      env: { ...process.env, ADMIN_EMAILS: adminEmail },
    });
    op = await chinesePage('10.78.3.3');
    await signIn(op, adminEmail, adminPassword);
  }, 60_000);

  it('shows the console pages in Chinese with the language switch', async () => {
    for (const [name, p] of [
      ['admin-overview', '/admin'],
      ['admin-accounts', '/admin/accounts'],
      ['admin-codes', '/admin/codes'],
      ['admin-channels', '/admin/channels'],
      ['admin-logs', '/admin/logs?model=none-such'],
      ['admin-announcements', '/admin/announcements'],
      ['admin-audit', '/admin/audit'],
    ] as const) {
      await op.goto(`${gw.url}${p}`);
      expect(await op.getAttribute('html', 'lang'), name).toBe('zh-CN');
      await expect(op.locator('header').textContent()).resolves.toContain('运营控制台');
      await expect(op.locator('nav[aria-label="管理"]').textContent()).resolves.toContain('兑换码');
      expect(await englishMessagesLeft(op), name).toEqual([]);
      await op.screenshot({ path: path.join(shots, `zh-${name}.png`), fullPage: true });
    }
    await expect(op.locator('header [data-testid="language-switch"]').count()).resolves.toBe(1);
    await op.goto(`${gw.url}/admin/accounts`);
    await op.getByTestId('account-row').first().locator('a').click();
    await op.waitForURL(/\/admin\/accounts\/[0-9a-f-]{36}/, { waitUntil: 'commit' });
    await op.getByTestId('admin-balance').waitFor();
    await expect(op.locator('main').textContent()).resolves.toContain('最近的请求');
    expect(await englishMessagesLeft(op)).toEqual([]);
  });

  it("says a console form's refusal in Chinese", async () => {
    await op.goto(`${gw.url}/admin/codes`);
    await op.getByTestId('code-amount').fill('0');
    await op.getByTestId('create-codes').click();
    await expect(op.getByTestId('codes-error').textContent()).resolves.toBe('每个兑换码的面值须大于 $0 且不超过 $10,000。');
    expect(await englishMessagesLeft(op)).toEqual([]);
    // A channel limit the form refuses names the field in Chinese.
    await op.goto(`${gw.url}/admin/channels`);
    const card = op.getByTestId('channel-limits').first();
    await card.getByTestId('limit-concurrency').fill('0');
    await card.getByTestId('save-limits').click();
    await expect(card.locator('[id$="-error"]').textContent()).resolves.toBe('并发数 必须是 1 到 100000 之间的整数；留空则使用运营配置中的限制。');
    expect(await englishMessagesLeft(op)).toEqual([]);
  });
});
