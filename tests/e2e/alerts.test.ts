// The alerts page and banner in a real browser: turn alerts on with a low-balance threshold above
// the balance, see the signing secret once, see the banner on every dashboard page, dismiss it.
// Screenshots in test-output/screenshots.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage, signIn } from '../support/browser';
import { closeBrowserTest } from '../support/teardown';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let page: Page;
let account: TestAccount;

const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1', ALERT_EVAL_MS: '200' } });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
  browser = await launchChromium();
  page = await openPage(browser, '10.77.29.2');
}, 120_000);

afterAll(() => closeBrowserTest({ browser, gw, fake }));

describe('budget alerts in the dashboard', { timeout: 60_000 }, () => {
  it('signs in', async () => {
    await signIn(page, gw.url, account.email, account.password);
  });

  it('turns alerts on and shows the signing secret once', async () => {
    await page.goto(`${gw.url}/dashboard/alerts`);
    await page.getByTestId('alert-low-balance').fill('10');
    await page.getByTestId('alert-save').click();
    const secret = (await page.getByTestId('alert-secret').locator('code').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await shot('29-10-alert-settings');
  });

  it('shows the low-balance alert in a banner on every dashboard page until dismissed', async () => {
    const banner = page.getByTestId('alert-banner');
    for (let i = 0; i < 50 && !(await banner.isVisible()); i++) {
      await page.waitForTimeout(300);
      await page.goto(`${gw.url}/dashboard/keys`);
    }
    await expect(banner.textContent()).resolves.toContain('Balance $5.00 is below your alert threshold of $10.00');
    await shot('29-11-alert-banner');

    await page.goto(`${gw.url}/dashboard/alerts`);
    await expect(page.getByTestId('alert-event').count()).resolves.toBe(1);
    await shot('29-12-alert-history');
    await banner.getByTestId('alert-dismiss').click();
    await banner.waitFor({ state: 'detached' });
    await page.goto(`${gw.url}/dashboard`);
    expect(await banner.count()).toBe(0);
  });
});
