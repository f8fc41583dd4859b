// The keys page in a real browser: create a restricted key with the controls form, see a request
// outside its allowlist refused, edit its limits and see the edit hold on the next request; the list
// shows the key's limits, its spend and its budget as a bar. Screenshots in test-output/screenshots.
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

function chat(apiKey: string, model: string): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1' } });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
  browser = await launchChromium();
  page = await openPage(browser, '10.77.29.1');
}, 120_000);

afterAll(() => closeBrowserTest({ browser, gw, fake }));

describe('key controls in the dashboard', { timeout: 60_000 }, () => {
  let apiKey = '';

  it('signs in', async () => {
    await signIn(page, gw.url, account.email, account.password);
  });

  it("refuses a bad value before sending it, in the words of the route's schema (lib/schemas/keys.ts)", async () => {
    await page.goto(`${gw.url}/dashboard/keys`);
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/keys') posts.push(r.url());
    };
    page.on('request', onRequest);
    await page.getByTestId('key-name').fill('draft');
    await page.locator('[data-testid="new-controls"] summary').click();
    await page.getByTestId('new-rpm').fill('lots');
    await page.getByTestId('create-key').click();
    await expect(page.getByTestId('new-rpm-error').textContent()).resolves.toBe(
      'Enter a whole number of requests per minute from 1 to 1,000,000, or leave it empty.',
    );
    await expect(page.getByTestId('create-error').textContent()).resolves.toBe('Check the fields marked below.');
    page.off('request', onRequest);
    expect(posts).toEqual([]);
  });

  it('creates a key restricted to one model with a budget, and a request for another model is refused', async () => {
    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByTestId('key-name').fill('intern');
    await page.locator('[data-testid="new-controls"] summary').click();
    await page.getByTestId('new-monthly').fill('2');
    await page.getByTestId('new-rpm').fill('30');
    await page.getByTestId('new-tpm').fill('50000');
    await page.locator('[data-testid="new-models"] input[value="deepseek-chat"]').check();
    await shot('29-01-key-controls-form');
    await page.getByTestId('create-key').click();
    apiKey = (await page.getByTestId('new-key').textContent())!.trim();
    expect(apiKey).toMatch(/^sk-gw-/);
    const row = page.getByTestId('key-row').filter({ hasText: 'intern' });
    await expect(row.getByTestId('key-limits').textContent()).resolves.toContain('1 model · 30 rpm · 50000 tokens/min');

    const refused = await chat(apiKey, 'gpt-4o-mini');
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('model_not_allowed');
    expect(body.error.message).toContain('"gpt-4o-mini"');
    const ok = await chat(apiKey, 'deepseek-chat');
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it('shows the spend and the monthly budget used as a bar', async () => {
    let spend = '';
    for (let i = 0; i < 40; i++) {
      await page.goto(`${gw.url}/dashboard/keys`);
      spend = (await page.getByTestId('key-row').filter({ hasText: 'intern' }).getByTestId('key-spend').textContent()) ?? '';
      if (!spend.includes('This month $0.00 ')) break; // the log row is written within LOG_FLUSH_MS
      await page.waitForTimeout(250);
    }
    const row = page.getByTestId('key-row').filter({ hasText: 'intern' });
    await expect(row.getByTestId('key-spend').textContent()).resolves.toMatch(/Monthly budget \(\d{4}-\d{2}\).*\/ \$2\.00/);
    await expect(row.getByRole('progressbar').count()).resolves.toBe(1);
    await shot('29-02-key-list-spend');
  });

  it('edits the key: a bad range is refused naming the field; a good one holds on the next request', async () => {
    const row = page.getByTestId('key-row').filter({ hasText: 'intern' });
    await row.getByTestId('edit-key').click();
    await page.getByTestId('edit-ips').fill('203.0.113.0/33');
    await page.getByTestId('save-key').click();
    // Said in words beside the field, not as the API's `"allowed_ips": …`.
    await expect(page.getByTestId('edit-ips-error').textContent()).resolves.toBe(
      '"203.0.113.0/33" is not an IPv4 or IPv6 address or range (such as 203.0.113.0/24).',
    );
    await expect(page.getByTestId('edit-error').textContent()).resolves.toBe('Check the fields marked below.');
    await shot('29-03-key-edit-error');
    await page.getByTestId('edit-ips').fill('203.0.113.0/24');
    await page.getByTestId('save-key').click();
    await page.getByTestId('edit-key-panel').waitFor({ state: 'detached' });
    await expect(row.getByTestId('key-limits').textContent()).resolves.toContain('1 IP range');
    // This test's requests come from 127.0.0.1 (no X-Forwarded-For): outside the range.
    const res = await chat(apiKey, 'deepseek-chat');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ip_not_allowed');
    await shot('29-04-key-edited');
  });
});
