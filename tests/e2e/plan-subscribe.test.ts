// Issue 42 item 6 in a real browser, paid by card: the customer subscribes on /dashboard/billing
// through Stripe Checkout, uses the plan and sees the window bar move, then cancels in Stripe's
// billing portal: first at the period's end (the card says when it ends, requests still bill the
// plan), then at once (the card gives way to the plans on offer, requests bill the balance). And a
// balance recharge through the same fake Checkout.
// Stripe is tests/support/fake-stripe.ts, reached through STRIPE_API_BASE (docs/decisions/049); the
// webhooks it sends are signed with the gateway's secret and take the same path as Stripe's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { signIn as signInAs } from '../support/browser';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { createAccount, type TestAccount } from '../support/accounts';

let gw: RunningGateway;
let fake: FakeUpstream;
let stripe: FakeStripe;
let browser: Browser;
let customer: TestAccount;

const WEBHOOK_SECRET = 'whsec_test_fake_stripe_plan_subscribe';
const plans = [
  {
    id: 'coder',
    name: 'Coder',
    price_usd_monthly: '20',
    unit: 'requests',
    windows: [{ name: '5h', hours: 5, limit: '50' }],
    models: ['*'],
    overflow: 'refuse',
    stripe_price_id: 'price_coder_monthly',
  },
];

const signIn = (p: Page, who: TestAccount) => signInAs(p, gw.url, who.email, who.password);

/** Who paid a request, as the response says. */
async function billedTo(key: string): Promise<string | null> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return res.headers.get('x-service-billed-to');
}

/** Reloads the billing page until `read` gives what is expected (webhooks and caches settle). */
const onBilling = (p: Page, read: () => Promise<unknown>) =>
  expect.poll(
    async () => {
      await p.goto(`${gw.url}/dashboard/billing`);
      return read();
    },
    { timeout: 20_000, interval: 250 },
  );

beforeAll(async () => {
  [fake, stripe] = await Promise.all([startFakeUpstream(), startFakeStripe({ prices: { price_coder_monthly: 2000 } })]);
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], overrides: { plans, limits: { login_per_ip_per_minute: 10_000 } } }),
    env: { STRIPE_SECRET_KEY: 'sk_test_fake_stripe', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.url, PUBLIC_BASE_URL: '' },
  });
  stripe.setWebhook(`${gw.url}/api/payment/webhook`, WEBHOOK_SECRET);
  customer = await createAccount({ balanceUsd: '5' });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await Promise.all([fake?.close(), stripe?.close()]);
});

describe('a plan paid by card, from checkout to cancellation', { timeout: 180_000 }, () => {
  it('subscribed through Checkout, the bar moves with use, cancelled in the portal at period end and then at once', async () => {
    const user = await (await browser.newContext()).newPage();
    await signIn(user, customer);

    // Before: the plan on offer with its Subscribe button; requests bill the balance.
    await user.goto(`${gw.url}/dashboard/billing`);
    await user.getByTestId('plans-on-offer').waitFor();
    expect(await user.getByTestId('plan-card').count()).toBe(0);
    expect(await billedTo(customer.apiKey)).toBe('balance');

    // Subscribe → Stripe Checkout (the fake pays at once and sends the webhooks) → back on billing.
    await user.getByTestId('plan-subscribe-coder').click();
    await user.waitForURL(`${gw.url}/dashboard/billing?plan=success`, { timeout: 30_000 });
    const checkout = stripe.requests.find((r) => r.path === '/v1/checkout/sessions');
    expect(checkout?.body).toMatchObject({ mode: 'subscription', client_reference_id: customer.userId, line_items: [{ price: 'price_coder_monthly' }] });
    expect(stripe.events.map((e) => `${e.type} ${e.status}`)).toEqual(['checkout.session.completed 200', 'invoice.paid 200']);
    await onBilling(user, () => user.getByTestId('plan-card').count()).toBe(1);
    const window5h = user.getByTestId('plan-window-5h');
    expect(await window5h.getByTestId('plan-window-used').textContent()).toBe('0 requests of 50 requests');
    expect(await window5h.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('0');
    expect(await user.getByTestId('plan-period').textContent()).toContain('Active until');
    // The first invoice is listed as the plan's charge.
    expect(await user.locator('body').textContent()).toContain('Plan charge');

    // Use it: requests paid by the plan, and the bar moves.
    await expect.poll(() => billedTo(customer.apiKey), { timeout: 20_000 }).toBe('plan');
    expect(await billedTo(customer.apiKey)).toBe('plan');
    await onBilling(user, () => window5h.getByTestId('plan-window-used').textContent()).toBe('2 requests of 50 requests');
    expect(await window5h.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('4');

    // Manage billing → the portal → "Cancel plan": it ends with the period, served until then.
    await user.getByTestId('plan-manage-billing').click();
    await user.waitForURL(`${stripe.url}/portal/**`);
    await user.getByRole('button', { name: 'Cancel plan' }).click();
    await user.waitForURL(`${gw.url}/dashboard/billing`);
    expect(stripe.events.at(-1)).toMatchObject({ type: 'customer.subscription.updated', status: 200 });
    await onBilling(user, () => user.getByTestId('plan-period').textContent()).toContain('Ends');
    expect(await billedTo(customer.apiKey)).toBe('plan');

    // And at once: the card is gone, the plans are on offer again, requests bill the balance.
    await user.getByTestId('plan-manage-billing').click();
    await user.waitForURL(`${stripe.url}/portal/**`);
    await user.getByRole('button', { name: 'Cancel now' }).click();
    await user.waitForURL(`${gw.url}/dashboard/billing`);
    expect(stripe.events.at(-1)).toMatchObject({ type: 'customer.subscription.deleted', status: 200 });
    await onBilling(user, () => user.getByTestId('plan-card').count()).toBe(0);
    await user.getByTestId('plan-subscribe-coder').waitFor();
    await expect.poll(() => billedTo(customer.apiKey), { timeout: 20_000 }).toBe('balance');
  });

  it('a recharge through the same Checkout comes back to this gateway and credits the balance once', async () => {
    const user = await (await browser.newContext()).newPage();
    await signIn(user, customer);
    const dollars = async () => Number(/\$([\d.]+)/.exec((await user.getByTestId('billing-balance').textContent()) ?? '')?.[1]);
    await user.goto(`${gw.url}/dashboard/billing`);
    const before = await dollars();
    expect(before).toBeGreaterThan(0);

    await user.getByTestId('recharge-amount').fill('10');
    await user.getByTestId('recharge-submit').click();
    // The return URL is the host the browser used (not the server's bind address).
    await user.waitForURL(`${gw.url}/dashboard/billing?recharge=success`, { timeout: 30_000 });
    expect(stripe.events.at(-1)).toMatchObject({ type: 'checkout.session.completed', status: 200 });
    await onBilling(user, async () => Math.round(((await dollars()) - before) * 100) / 100).toBe(10);
  });
});
