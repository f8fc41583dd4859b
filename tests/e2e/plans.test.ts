// Issue 42 item 6 in a real browser: the operator grants a plan on the console's account page, the
// customer sees the plan card with its windows, uses it and sees the bar move and the log say
// "Plan", then the operator ends it (a confirmation naming the effect) and the card gives way to the
// plans on offer. Also in Chinese, and on a phone without sideways scrolling.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { signIn as signInAs } from '../support/browser';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let operator: TestAccount;
let customer: TestAccount;

const plans = [
  {
    id: 'coder',
    name: 'Coder',
    price_usd_monthly: '20',
    unit: 'requests',
    windows: [
      { name: '5h', hours: 5, limit: '50' },
      { name: 'weekly', days: 7, limit: '500' },
    ],
    models: ['*'],
    overflow: 'refuse',
  },
  {
    id: 'team',
    name: 'Team',
    price_usd_monthly: '99',
    unit: 'usd',
    windows: [{ name: 'monthly', days: 30, limit: '200' }],
    models: ['gpt-4o-mini'],
    overflow: 'balance',
  },
];

const signIn = (p: Page, who: TestAccount) => signInAs(p, gw.url, who.email, who.password);

const chat = (key: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], overrides: { plans, limits: { login_per_ip_per_minute: 10_000 } } }),
    env: { STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' },
  });
  [operator, customer] = await Promise.all([createAccount({ balanceUsd: '5' }), createAccount({ balanceUsd: '5' })]);
  await (await getDb()).user.update({ where: { id: operator.userId }, data: { role: 'admin' } });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
});

describe('a plan from grant to end', { timeout: 120_000 }, () => {
  it('granted in the console, shown as bars that move with use, named in the log, ended with a confirmation', async () => {
    const ops = await (await browser.newContext()).newPage();
    await signIn(ops, operator);
    const user = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await signIn(user, customer);

    // Before: the plans on offer, side by side.
    await user.goto(`${gw.url}/dashboard/billing`);
    await expect.poll(() => user.getByTestId('plans-on-offer').textContent()).toContain('Coder');
    expect(await user.getByTestId('plan-team').textContent()).toContain('$99');

    // The operator grants Coder for 30 days.
    await ops.goto(`${gw.url}/admin/accounts/${customer.userId}`);
    await ops.getByTestId('grant-plan-select').selectOption('coder');
    await ops.getByTestId('grant-plan-days').fill('30');
    await ops.getByTestId('grant-plan').click();
    await ops.getByTestId('plan-card').waitFor();

    // The customer's card: two windows, nothing used.
    await user.goto(`${gw.url}/dashboard/billing`);
    await user.getByTestId('plan-card').waitFor();
    expect(await user.getByTestId('plan-window-5h').getByTestId('plan-window-used').textContent()).toBe('0 requests of 50 requests');
    // Use it: three requests, paid by the plan.
    for (let i = 0; i < 3; i++) {
      const res = await chat(customer.apiKey);
      expect(res.headers.get('x-service-billed-to')).toBe('plan');
      await res.text();
    }
    await expect
      .poll(async () => {
        await user.reload();
        return user.getByTestId('plan-window-5h').getByTestId('plan-window-used').textContent();
      })
      .toBe('3 requests of 50 requests');
    expect(await user.getByTestId('plan-window-5h').getByRole('progressbar').getAttribute('aria-valuenow')).toBe('6');
    // On a phone: nothing wider than the screen.
    expect(await user.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // The overview shows it too, and the log names who paid.
    await user.goto(`${gw.url}/dashboard`);
    await user.getByTestId('plan-card').waitFor();
    await user.goto(`${gw.url}/dashboard/logs`);
    await expect.poll(() => user.getByTestId('log-billed-plan').count()).toBe(3);

    // In Chinese.
    await user.context().addCookies([{ name: 'lang', value: 'zh-CN', url: gw.url }]);
    await user.goto(`${gw.url}/dashboard/billing`);
    expect(await user.getByTestId('plan-card').textContent()).toContain('您的套餐');
    // The window's unit in Chinese too, not the config's English word.
    expect(await user.getByTestId('plan-window-5h').getByTestId('plan-window-used').textContent()).toBe('3 次请求 / 50 次请求');

    // The operator ends it: a confirmation naming the effect.
    let asked = '';
    ops.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await ops.getByTestId('end-plan').click();
    await expect.poll(() => ops.getByTestId('plan-card').count()).toBe(0);
    expect(asked).toContain('billed to the balance');
    await expect.poll(async () => (await chat(customer.apiKey)).headers.get('x-service-billed-to'), { timeout: 10_000 }).toBe('balance');
    await user.goto(`${gw.url}/dashboard/billing`);
    await user.getByTestId('plans-on-offer').waitFor();
    expect(await user.getByTestId('plan-card').count()).toBe(0);
  });
});
