// Projects in the dashboard (docs/decisions/056) in Debian's Chromium on a 390 px phone, in English
// and Chinese: a project made on the projects page, a key put in it from the key form, its request
// refused outside the project's models and its spend on the usage page grouped by project; no
// sideways scrolling and no serious axe-core violation. Screenshots in test-output/screenshots
// (projects-*.png).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { axeProblems } from '../support/axe';
import { launchChromium, openPage, signIn } from '../support/browser';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let page: Page;
let account: TestAccount;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1' } });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
  browser = await launchChromium();
  page = await openPage(browser, '10.56.0.1', { viewport: { width: 390, height: 844 } });
  await signIn(page, gw.url, account.email, account.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
});

async function fitsAndPasses(name: string) {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(390);
  expect(await axeProblems(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, `projects-${name}.png`), fullPage: true });
}

describe('projects page', { timeout: 120_000 }, () => {
  it('makes a project, puts a key in it from the key form, and shows its spend by project, in English and Chinese on a phone', async () => {
    for (const [lang, projectName, title, noProject] of [
      ['en', 'Search', 'Projects', 'No project'],
      ['zh-CN', '搜索', '项目', '无项目'],
    ] as const) {
      await page.context().addCookies([{ name: 'lang', value: lang, url: gw.url }]);
      await page.goto(`${gw.url}/dashboard/projects`);
      await expect(page.locator('h1').first().textContent()).resolves.toContain(title);
      // A bad budget is answered beside its field.
      await page.fill('#new-project-name', projectName);
      await page.fill('#new-project-monthly', '-1');
      await page.getByTestId('create-project').click();
      await page.locator('#new-project-monthly-error').waitFor();
      await page.fill('#new-project-monthly', '5');
      await page.locator('[data-testid="new-project-models"] input[value="deepseek-chat"]').check();
      await page.getByTestId('create-project').click();
      await page.getByTestId('project-row').filter({ hasText: projectName }).waitFor();
      await fitsAndPasses(`${lang}-page`);

      // The key form offers the project.
      await page.goto(`${gw.url}/dashboard/keys`);
      await page.getByTestId('key-name').fill(`in ${projectName}`);
      await page.locator('[data-testid="new-controls"] summary').click();
      await expect(page.locator('#new-project option').first().textContent()).resolves.toBe(noProject);
      await page.selectOption('#new-project', { label: projectName });
      await page.getByTestId('create-key').click();
      const key = (await page.getByTestId('new-key').textContent())!.trim();
      // Phones hide the limits column; the list names the project (read from the DOM).
      await expect(page.getByTestId('key-limits').first().textContent()).resolves.toContain(projectName);
      await fitsAndPasses(`${lang}-keys`);

      const call = (model: string) =>
        fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
        });
      const refused = await call('gpt-4o-mini');
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(`project "${projectName}"`);
      const served = await call('deepseek-chat');
      expect(served.status).toBe(200);
      const id = served.headers.get('x-request-id')!;
      await served.text();
      await waitFor(() => getDb().then((db) => db.requestLog.findFirst({ where: { id } })), 10_000);

      await page.goto(`${gw.url}/dashboard/usage?group_by=project`);
      await page.getByTestId('usage-group-row').filter({ hasText: projectName }).waitFor();
      await fitsAndPasses(`${lang}-usage`);
    }
  });
});
