// Exact money on every page and message (#40 item 1), in a real browser against the production
// build: an account credited $9.9978, redeeming a $10.0011 code and debited $0.0000117 sees exactly
// those figures in the redeem toast, the billing history, the operator's account page, the alert
// banner and a key-budget refusal; a request's cost reads the same in its header, the logs page,
// the usage page and the logs CSV. Nothing is rounded ($9.9978 never reads $10.00).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage, signIn } from '../support/browser';
import { closeBrowserTest } from '../support/teardown';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { creditBalance } from '@/lib/billing/ledger';
import { usdToPico } from '@/lib/money';
import { adminAdjustBalance } from '@/lib/admin/accounts';
import { CLI_ACTOR } from '@/lib/audit';
import { createCodeBatch } from '@/lib/admin/redemption';
import { createKey } from '@/lib/accounts/queries';
import { formatMoney } from '@/lib/format';

let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let page: Page;
let account: TestAccount;
const operatorEmail = `ops-money-${randomBytes(4).toString('hex')}@example.com`;
const password = 'sturdy-pass-42';
const text = async (p: Page, testId: string) => (await p.getByTestId(testId).allTextContents()).join('\n');

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1', ALERT_EVAL_MS: '200', STRIPE_SECRET_KEY: '' } });
  account = await createAccount({ tier: 'pro' });
  await creditBalance(account.userId, 'admin_credit', usdToPico('9.9978'), { note: 'goodwill' });
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'create-user', '--email', operatorEmail, '--password', password], {
    cwd: ROOT,
    env: { ...process.env, ADMIN_EMAILS: operatorEmail },
  });
  browser = await launchChromium();
  page = await openPage(browser, '10.77.40.1');
}, 120_000);

afterAll(() => closeBrowserTest({ browser, gw, fake }));

describe('exact money everywhere', { timeout: 90_000 }, () => {
  it('the redeem toast and the billing history show $10.0011 and $9.9978 as they are', async () => {
    await signIn(page, gw.url, account.email, account.password);
    const batch = await createCodeBatch(CLI_ACTOR, { amountPico: usdToPico('10.0011'), count: 1 });
    await page.goto(`${gw.url}/dashboard/billing`);
    await page.getByTestId('redeem-code').fill(batch.codes[0]!.code);
    await page.getByTestId('redeem-submit').click();
    await expect(page.getByTestId('redeem-message').textContent()).resolves.toContain('$10.0011 added. Balance: $19.9989.');
    await adminAdjustBalance(CLI_ACTOR, account.userId, -usdToPico('0.0000117'), 'tiny charge');
    await page.goto(`${gw.url}/dashboard/billing`);
    await expect(text(page, 'billing-balance')).resolves.toContain('$19.9988883');
    const rows = await text(page, 'ledger-row');
    expect(rows).toContain('+$9.9978');
    expect(rows).toContain('+$10.0011');
    expect(rows).toContain('-$0.0000117');
    expect(rows).toContain('$19.9989');
    expect(rows).not.toMatch(/\$10\.00(?!\d)|\$20\.00/);
  });

  it('the alert banner formats the balance and threshold with the same function', async () => {
    await page.goto(`${gw.url}/dashboard/alerts`);
    await page.getByTestId('alert-low-balance').fill('25');
    await page.getByTestId('alert-save').click();
    await page.getByTestId('alert-secret').waitFor();
    for (let i = 0; i < 50; i++) {
      await page.goto(`${gw.url}/dashboard`);
      if ((await page.getByTestId('alert-banner').count()) > 0) break;
      await page.waitForTimeout(300);
    }
    await expect(text(page, 'alert-banner')).resolves.toContain('Balance $19.9988883 is below your alert threshold of $25.00.');
  });

  it("the operator's account page shows the balance and ledger exactly", async () => {
    const ops = await openPage(browser, '10.77.40.2');
    await signIn(ops, gw.url, operatorEmail, password);
    await ops.goto(`${gw.url}/admin/accounts/${account.userId}`);
    await expect(ops.getByTestId('admin-balance').textContent()).resolves.toBe('$19.9988883');
    const ledger = await text(ops, 'admin-ledger-row');
    for (const amount of ['$9.9978', '$10.0011', '-$0.0000117']) expect(ledger).toContain(amount);
    await ops.close();
  });

  it("a request's cost reads the same in its header, the logs page, the usage page and the CSV", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(200);
    const cost = res.headers.get('x-service-cost-usd')!;
    await res.arrayBuffer();
    const shown = formatMoney(usdToPico(cost));
    expect(shown).toMatch(/^\$0\.0000\d+$/);
    let logs = '';
    for (let i = 0; i < 40 && !logs.includes(shown); i++) {
      await page.goto(`${gw.url}/dashboard/logs`);
      logs = (await page.locator('main').textContent()) ?? '';
      if (!logs.includes(shown)) await page.waitForTimeout(250);
    }
    expect(logs).toContain(shown);
    await page.goto(`${gw.url}/dashboard/usage`);
    await expect(text(page, 'usage-spend')).resolves.toContain(shown);
    const csv = await page.evaluate(async () => (await fetch('/api/logs/export')).text());
    expect(csv).toContain(cost);
  });

  it('the keys page and a key-budget refusal write the budget exactly, and the form says what a budget buys', async () => {
    const key = await createKey(account.userId, 'tiny');
    await (await getDb()).apiKey.update({ where: { id: key.id }, data: { budgetUsd: '0.000001' } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(402);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    expect(message).toContain('lifetime budget of $0.000001 with $0.000001 left');
    expect(message).not.toContain('$0.00 ');
    await page.goto(`${gw.url}/dashboard/keys`);
    await expect(text(page, 'key-spend')).resolves.toContain('$0.00 / $0.000001');
    await page.getByTestId('new-controls').locator('summary').click();
    await page.getByTestId('new-budget').fill('2');
    await expect(page.getByTestId('new-budget-allows').textContent()).resolves.toMatch(/^≈ [\d,]+ requests of gpt-4o-mini at 1K tokens in and 1K out/);
  });
});
