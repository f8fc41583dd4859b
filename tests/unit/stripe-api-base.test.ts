// STRIPE_API_BASE (docs/decisions/049): validated as an http(s) origin, turned into the stripe
// client's host/port/protocol, and the client really talks to tests/support/fake-stripe.ts that way.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import Stripe from 'stripe';
import { stripeApiBaseOptions } from '@/lib/billing/stripe';
import { decodeForm, startFakeStripe, type FakeStripe } from '../support/fake-stripe';

async function loadEnv(value: string) {
  vi.resetModules();
  const before = process.env.STRIPE_API_BASE;
  process.env.STRIPE_API_BASE = value;
  try {
    return (await import('@/lib/env')).env;
  } finally {
    if (before === undefined) delete process.env.STRIPE_API_BASE;
    else process.env.STRIPE_API_BASE = before;
  }
}

describe('STRIPE_API_BASE', () => {
  it('accepts an http(s) origin and gives the client its host, port and protocol', async () => {
    const env = await loadEnv('http://127.0.0.1:12111');
    expect(stripeApiBaseOptions(env.STRIPE_API_BASE)).toEqual({ host: '127.0.0.1', port: '12111', protocol: 'http' });
    expect(stripeApiBaseOptions(new URL('https://stripe.internal'))).toEqual({ host: 'stripe.internal', port: 443, protocol: 'https' });
    expect(stripeApiBaseOptions(undefined)).toEqual({});
  });

  it.each(['ftp://127.0.0.1:12111', 'http://127.0.0.1:12111/v1', 'http://user:pw@127.0.0.1', 'not a url'])('refuses %s, naming the variable', async (value) => {
    await expect(loadEnv(value)).rejects.toThrow(/STRIPE_API_BASE/);
  });
});

describe('the stripe client against the fake', () => {
  let fake: FakeStripe;
  let stripe: Stripe;
  beforeAll(async () => {
    fake = await startFakeStripe({ prices: { price_a: 1500 } });
    stripe = new Stripe('sk_test_unit', stripeApiBaseOptions(new URL(fake.url)));
  });
  afterAll(() => fake.close());

  it('creates a subscription Checkout whose URL is on the fake, and answers Stripe errors for unknown prices and subscriptions', async () => {
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: 'price_a', quantity: 1 }],
      metadata: { userId: 'u', planId: 'p' },
      success_url: 'http://gw.test/ok',
    });
    expect(session).toMatchObject({ object: 'checkout.session', mode: 'subscription', amount_total: 1500, metadata: { userId: 'u', planId: 'p' } });
    expect(session.url?.startsWith(`${fake.url}/checkout/`)).toBe(true);
    await expect(
      stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: 'price_none', quantity: 1 }], success_url: 'http://gw.test/ok' }),
    ).rejects.toMatchObject({ type: 'StripeInvalidRequestError', param: 'line_items' });
    await expect(stripe.subscriptions.retrieve('sub_missing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404 });
  });

  it('decodes Stripe form encoding into nested objects and arrays', () => {
    expect(decodeForm('a[b][0][c]=1&a[b][1][c]=2&d=x')).toEqual({ a: { b: [{ c: '1' }, { c: '2' }] }, d: 'x' });
  });
});
