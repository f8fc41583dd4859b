// Plans paid with Stripe Billing (issue 42 item 2; docs/decisions/048) against the real PostgreSQL and
// the built gateway: the subscription webhooks, signed locally with stripe.webhooks.generateTestHeaderString
// exactly as Stripe signs them (as tests/integration/payments.test.ts does), Checkout and the portal
// with the Stripe client's calls stubbed (no network), and a gateway request billed to the plan.
//
// lib/env.ts and the operator config are read ONCE, when first imported: the webhook secret, a stand-in
// API key and a config with plans are set at the top of this file, and every app module is imported
// dynamically in beforeAll (a static import would be hoisted above the assignments).

import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import StripeLib from 'stripe';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, testConfig, writeConfig, type RunningGateway } from '../support/gateway';

const WEBHOOK_SECRET = 'whsec_test_plan_billing_secret';
const GRACE_DAYS = 3;
const PLANS = {
  plans: [
    {
      id: 'starter',
      name: 'Starter',
      price_usd_monthly: '10',
      unit: 'requests',
      windows: [{ name: '5h', hours: 5, limit: '50' }],
      models: ['gpt-4o-mini'],
      stripe_price_id: 'price_starter',
    },
    {
      id: 'max',
      name: 'Max',
      price_usd_monthly: '40',
      unit: 'requests',
      windows: [{ name: '5h', hours: 5, limit: '500' }],
      models: ['gpt-4o-mini'],
      stripe_price_id: 'price_max',
    },
    { id: 'gift', name: 'Gift', price_usd_monthly: '0', windows: [{ name: 'monthly', days: 30, limit: '5' }], models: ['*'] },
  ],
  plan_grace_days: GRACE_DAYS,
  // Sign-ins of every test file running at once share one per-IP counter in Redis.
  limits: { login_per_ip_per_minute: 10_000 },
};
const planConfig = (openaiUrl: string) => testConfig({ openaiUrls: [openaiUrl], channelPrefix: 'planbill-', overrides: PLANS });

process.env.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET;
process.env.STRIPE_SECRET_KEY = 'sk_test_plan_billing_stand_in';
process.env.GATEWAY_CONFIG = writeConfig(planConfig('http://127.0.0.1:9'));

// requireUserId reads the next-auth session, which needs a Next request scope: stand in for it.
const session = vi.hoisted(() => ({ userId: null as string | null }));
vi.mock('next-auth', () => ({
  getServerSession: async () => (session.userId ? { user: { id: session.userId } } : null),
}));

type Route = (req: Request, route: { params: Promise<Record<string, string>> }) => Promise<Response>;

let db: Awaited<ReturnType<typeof import('@/lib/db').getDb>>;
let stripe: Stripe;
let webhookPOST: Route;
let checkoutPOST: Route;
let portalPOST: Route;
let accounts: typeof import('../support/accounts');
let subscriptions: typeof import('@/lib/plans/subscriptions');
let upstream: FakeUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  db = await (await import('@/lib/db')).getDb();
  stripe = (await import('@/lib/billing/stripe')).getStripe()!;
  webhookPOST = (await import('@/app/api/payment/webhook/route')).POST;
  checkoutPOST = (await import('@/app/api/plan/checkout/route')).POST;
  portalPOST = (await import('@/app/api/plan/portal/route')).POST;
  accounts = await import('../support/accounts');
  subscriptions = await import('@/lib/plans/subscriptions');
  upstream = await startFakeUpstream();
  gateway = await startGateway({ config: planConfig(upstream.url) });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await (await import('@/lib/limits/runtime')).getLimiter().close();
  await db?.$disconnect();
});

// ---- fixtures ------------------------------------------------------------------------------

const routeCtx = { params: Promise.resolve({}) };
const id = (prefix: string) => `${prefix}_test_${randomUUID().replace(/-/g, '')}`;
const unix = (ms: number) => Math.floor(ms / 1000);
const DAY = 86_400_000;

function event(type: string, object: Record<string, unknown>, eventId = id('evt')): string {
  return JSON.stringify({
    id: eventId,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: unix(Date.now()),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  });
}

/** A Stripe subscription as the API (and its events) show it: one item, the period end on the item. */
function stripeSubscription(f: { id: string; price: string; periodEnd: number; status?: string; cancelAtPeriodEnd?: boolean; userId?: string; plan?: string }) {
  return {
    id: f.id,
    object: 'subscription',
    status: f.status ?? 'active',
    cancel_at_period_end: f.cancelAtPeriodEnd ?? false,
    customer: 'cus_test_1',
    metadata: f.userId ? { userId: f.userId, planId: f.plan ?? 'starter' } : {},
    items: {
      object: 'list',
      data: [{ id: `si_${f.id}`, object: 'subscription_item', price: { id: f.price, object: 'price' }, current_period_end: unix(f.periodEnd) }],
    },
  };
}

function checkoutSession(f: { userId: string; subscriptionId: string; customer?: string; plan?: string }) {
  return {
    id: id('cs'),
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    amount_total: 1000,
    currency: 'usd',
    customer: f.customer ?? 'cus_test_1',
    subscription: f.subscriptionId,
    client_reference_id: f.userId,
    metadata: { userId: f.userId, planId: f.plan ?? 'starter' },
  };
}

function invoice(f: { subscriptionId: string; periodEnd: number; amountPaid?: number; invoiceId?: string; metadata?: Record<string, string> }) {
  return {
    id: f.invoiceId ?? id('in'),
    object: 'invoice',
    number: 'ABC-0001',
    customer: 'cus_test_1',
    currency: 'usd',
    amount_paid: f.amountPaid ?? 1000,
    hosted_invoice_url: 'https://invoice.stripe.test/i/abc',
    parent: { type: 'subscription_details', subscription_details: { subscription: f.subscriptionId, metadata: f.metadata ?? null } },
    lines: { object: 'list', data: [{ id: 'il_1', period: { start: unix(Date.now()), end: unix(f.periodEnd) } }] },
  };
}

const sign = (payload: string, secret = WEBHOOK_SECRET) => StripeLib.webhooks.generateTestHeaderString({ payload, secret });

async function deliver(payload: string, signature = sign(payload)) {
  const res = await webhookPOST(
    new Request('http://localhost/api/payment/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body: payload,
    }),
    routeCtx,
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function post(route: Route, path: string, body: unknown = {}, headers: Record<string, string> = {}) {
  return route(
    new Request(`http://localhost${path}`, {
      method: 'POST',
      // A same-origin browser request: the CSRF guard needs its Origin to match the Host.
      headers: { 'content-type': 'application/json', host: 'localhost', origin: 'http://localhost', ...headers },
      body: JSON.stringify(body),
    }),
    routeCtx,
  );
}

/** A new account subscribed through checkout.session.completed (the subscription read from "Stripe"). */
async function subscribed(opts: { balanceUsd?: string; plan?: 'starter' | 'max' } = {}) {
  const account = await accounts.createAccount({ balanceUsd: opts.balanceUsd ?? '5' });
  const subscriptionId = id('sub');
  const periodEnd = Date.now() + 30 * DAY;
  const plan = opts.plan ?? 'starter';
  const retrieve = vi
    .spyOn(stripe.subscriptions, 'retrieve')
    .mockResolvedValue(stripeSubscription({ id: subscriptionId, price: `price_${plan}`, periodEnd }) as unknown as Stripe.Response<Stripe.Subscription>);
  const res = await deliver(event('checkout.session.completed', checkoutSession({ userId: account.userId, subscriptionId, plan })));
  expect(res).toEqual({ status: 200, body: { received: true } });
  expect(retrieve).toHaveBeenCalledWith(subscriptionId);
  retrieve.mockRestore();
  return { account, subscriptionId, periodEnd };
}

const rowOf = (subscriptionId: string) => db.subscription.findUniqueOrThrow({ where: { stripeSubscriptionId: subscriptionId } });

async function chat(apiKey: string) {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res;
}

// ---- webhooks ------------------------------------------------------------------------------

describe('subscription webhooks on POST /api/payment/webhook', () => {
  it('refuses a checkout.session.completed signed with another secret with 400 and starts no plan', async () => {
    const account = await accounts.createAccount();
    const payload = event('checkout.session.completed', checkoutSession({ userId: account.userId, subscriptionId: id('sub') }));
    const res = await deliver(payload, sign(payload, 'whsec_someone_else'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'invalid_request', message_code: 'billing.bad_signature' } });
    expect(await db.subscription.count({ where: { userId: account.userId } })).toBe(0);
  });

  it('checkout.session.completed starts the plan now, with the subscription period end and the customer, and credits no balance', async () => {
    const before = Date.now();
    const { account, subscriptionId, periodEnd } = await subscribed({ balanceUsd: '5' });
    const row = await rowOf(subscriptionId);
    expect(row).toMatchObject({
      userId: account.userId,
      planId: 'starter',
      source: 'stripe',
      status: 'active',
      stripeCustomerId: 'cus_test_1',
      cancelAtPeriodEnd: false,
    });
    expect(row.startedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(row.startedAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(row.currentPeriodEnd.getTime()).toBe(unix(periodEnd) * 1000);
    expect((await subscriptions.currentSubscription(account.userId))?.id).toBe(row.id);
    // The session's amount_total paid the plan by card: it is no top-up.
    expect(await accounts.balanceOf(account.userId)).toBe('5.000000000000');
    expect(await db.payment.count({ where: { userId: account.userId } })).toBe(0);
  });

  it('applies a replayed checkout.session.completed once', async () => {
    const account = await accounts.createAccount();
    const subscriptionId = id('sub');
    const retrieve = vi
      .spyOn(stripe.subscriptions, 'retrieve')
      .mockResolvedValue(
        stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd: Date.now() + 30 * DAY }) as unknown as Stripe.Response<Stripe.Subscription>,
      );
    const payload = event('checkout.session.completed', checkoutSession({ userId: account.userId, subscriptionId }));
    const results = [await deliver(payload), await deliver(payload), ...(await Promise.all([deliver(payload), deliver(payload)]))];
    retrieve.mockRestore();
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await db.subscription.count({ where: { userId: account.userId } })).toBe(1);
  });

  it('ends a plan granted by code when a paid one starts', async () => {
    const account = await accounts.createAccount();
    const granted = await subscriptions.grantPlan(account.userId, 'gift', 10, 'code');
    const subscriptionId = id('sub');
    const retrieve = vi
      .spyOn(stripe.subscriptions, 'retrieve')
      .mockResolvedValue(
        stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd: Date.now() + 30 * DAY }) as unknown as Stripe.Response<Stripe.Subscription>,
      );
    await deliver(event('checkout.session.completed', checkoutSession({ userId: account.userId, subscriptionId })));
    retrieve.mockRestore();
    expect((await db.subscription.findUniqueOrThrow({ where: { id: granted.id } })).status).toBe('canceled');
    expect((await subscriptions.currentSubscription(account.userId))?.stripeSubscriptionId).toBe(subscriptionId);
  });

  it('invoice.paid extends the period, clears the grace, links the invoice and writes one zero ledger row, even when replayed', async () => {
    const { account, subscriptionId, periodEnd } = await subscribed({ balanceUsd: '5' });
    await db.subscription.update({ where: { stripeSubscriptionId: subscriptionId }, data: { status: 'past_due', graceUntil: new Date(Date.now() + DAY) } });
    const nextEnd = periodEnd + 30 * DAY;
    const inv = invoice({ subscriptionId, periodEnd: nextEnd, amountPaid: 1000, invoiceId: id('in') });
    const payload = event('invoice.paid', inv);
    expect((await deliver(payload)).status).toBe(200);
    expect((await deliver(payload)).status).toBe(200);
    // The same invoice in another event (Stripe may send one twice under two ids): still one ledger row.
    expect((await deliver(event('invoice.paid', inv))).status).toBe(200);

    const row = await rowOf(subscriptionId);
    expect(row).toMatchObject({ status: 'active', graceUntil: null, latestInvoiceUrl: 'https://invoice.stripe.test/i/abc' });
    expect(row.currentPeriodEnd.getTime()).toBe(unix(nextEnd) * 1000);
    const entries = await db.ledgerEntry.findMany({ where: { userId: account.userId, kind: 'subscription' } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ reference: inv.id, note: 'Plan Starter: 10.00 USD paid by card (Stripe invoice ABC-0001)' });
    expect(entries[0]!.amountUsd.toFixed(2)).toBe('0.00');
    expect(entries[0]!.balanceAfterUsd.toFixed(2)).toBe('5.00');
    expect(await accounts.balanceOf(account.userId)).toBe('5.000000000000');

    // An older invoice arriving late never moves the period end back.
    await deliver(event('invoice.paid', invoice({ subscriptionId, periodEnd })));
    expect((await rowOf(subscriptionId)).currentPeriodEnd.getTime()).toBe(unix(nextEnd) * 1000);
  });

  it('invoice.paid before checkout.session.completed makes the row from the subscription metadata; the checkout then keeps it', async () => {
    const account = await accounts.createAccount();
    const subscriptionId = id('sub');
    const periodEnd = Date.now() + 30 * DAY;
    await deliver(event('invoice.paid', invoice({ subscriptionId, periodEnd, metadata: { userId: account.userId, planId: 'starter' } })));
    const first = await rowOf(subscriptionId);
    expect(first).toMatchObject({ userId: account.userId, planId: 'starter', status: 'active', source: 'stripe' });
    const retrieve = vi
      .spyOn(stripe.subscriptions, 'retrieve')
      .mockResolvedValue(stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd }) as unknown as Stripe.Response<Stripe.Subscription>);
    await deliver(event('checkout.session.completed', checkoutSession({ userId: account.userId, subscriptionId })));
    retrieve.mockRestore();
    expect(await db.subscription.count({ where: { userId: account.userId } })).toBe(1);
    expect((await rowOf(subscriptionId)).startedAt.getTime()).toBe(first.startedAt.getTime());
    expect(await db.ledgerEntry.count({ where: { userId: account.userId, kind: 'subscription' } })).toBe(1);
  });

  it('invoice.payment_failed marks it past due with plan_grace_days of grace; a retry failing again keeps the first grace', async () => {
    const { account, subscriptionId } = await subscribed();
    const before = Date.now();
    expect((await deliver(event('invoice.payment_failed', invoice({ subscriptionId, periodEnd: Date.now() + DAY })))).status).toBe(200);
    const row = await rowOf(subscriptionId);
    expect(row.status).toBe('past_due');
    expect(row.graceUntil!.getTime()).toBeGreaterThanOrEqual(before + GRACE_DAYS * DAY);
    expect(row.graceUntil!.getTime()).toBeLessThanOrEqual(Date.now() + GRACE_DAYS * DAY);
    await deliver(event('invoice.payment_failed', invoice({ subscriptionId, periodEnd: Date.now() + DAY })));
    expect((await rowOf(subscriptionId)).graceUntil).toEqual(row.graceUntil);
    // Within the grace the plan is still the account's.
    expect((await subscriptions.currentSubscription(account.userId))?.id).toBe(row.id);
    // Once the grace has passed, it is not.
    await db.subscription.update({ where: { id: row.id }, data: { graceUntil: new Date(Date.now() - 1000) } });
    expect(await subscriptions.currentSubscription(account.userId)).toBeNull();
  });

  it('customer.subscription.updated changes the plan by price, the cancel flag and the status', async () => {
    const { account, subscriptionId, periodEnd } = await subscribed();
    const updated = stripeSubscription({ id: subscriptionId, price: 'price_max', periodEnd, cancelAtPeriodEnd: true });
    expect((await deliver(event('customer.subscription.updated', updated))).status).toBe(200);
    expect(await rowOf(subscriptionId)).toMatchObject({ planId: 'max', cancelAtPeriodEnd: true, status: 'active' });

    await deliver(event('customer.subscription.updated', { ...updated, status: 'past_due' }));
    const pastDue = await rowOf(subscriptionId);
    expect(pastDue.status).toBe('past_due');
    expect(pastDue.graceUntil).not.toBeNull();
    await deliver(event('customer.subscription.updated', { ...updated, status: 'active', cancel_at_period_end: false }));
    expect(await rowOf(subscriptionId)).toMatchObject({ status: 'active', graceUntil: null, cancelAtPeriodEnd: false });
    expect((await subscriptions.currentSubscription(account.userId))?.planId).toBe('max');
  });

  it('customer.subscription.deleted ends the plan now, and a late updated event does not revive it', async () => {
    const { account, subscriptionId, periodEnd } = await subscribed();
    const sub = stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd, status: 'canceled' });
    expect((await deliver(event('customer.subscription.deleted', sub))).status).toBe(200);
    const row = await rowOf(subscriptionId);
    expect(row.status).toBe('canceled');
    expect(row.currentPeriodEnd.getTime()).toBeLessThanOrEqual(Date.now());
    expect(await subscriptions.currentSubscription(account.userId)).toBeNull();
    await deliver(event('customer.subscription.updated', { ...sub, status: 'active' }));
    expect((await rowOf(subscriptionId)).status).toBe('canceled');
  });

  it('ignores events for a subscription this deployment does not know, with 200', async () => {
    const res = await deliver(event('customer.subscription.deleted', stripeSubscription({ id: id('sub'), price: 'price_starter', periodEnd: Date.now() })));
    expect(res).toEqual({ status: 200, body: { received: true } });
  });
});

// ---- checkout and portal -------------------------------------------------------------------

describe('POST /api/plan/checkout and /api/plan/portal', () => {
  it('creates a subscription-mode Checkout Session for the plan price, for the account', async () => {
    const account = await accounts.createAccount();
    session.userId = account.userId;
    const create = vi
      .spyOn(stripe.checkout.sessions, 'create')
      .mockResolvedValue({ id: 'cs_test_new', url: 'https://checkout.stripe.test/c/pay/cs_test_new' } as unknown as Stripe.Response<Stripe.Checkout.Session>);
    const res = await post(checkoutPOST, '/api/plan/checkout', { plan: 'starter' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: 'https://checkout.stripe.test/c/pay/cs_test_new' });
    expect(create).toHaveBeenCalledTimes(1);
    const params = create.mock.calls[0]![0]!;
    expect(params).toMatchObject({
      mode: 'subscription',
      line_items: [{ price: 'price_starter', quantity: 1 }],
      client_reference_id: account.userId,
      metadata: { userId: account.userId, planId: 'starter' },
      subscription_data: { metadata: { userId: account.userId, planId: 'starter' } },
    });
    expect(params.customer).toBeUndefined(); // none yet: Checkout makes one
    create.mockRestore();
    session.userId = null;
  });

  it('reuses the account Stripe customer on a later checkout', async () => {
    const { account, subscriptionId } = await subscribed();
    await deliver(
      event('customer.subscription.deleted', stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd: Date.now(), status: 'canceled' })),
    );
    session.userId = account.userId;
    const create = vi
      .spyOn(stripe.checkout.sessions, 'create')
      .mockResolvedValue({ id: 'cs_test_again', url: 'https://checkout.stripe.test/again' } as unknown as Stripe.Response<Stripe.Checkout.Session>);
    expect((await post(checkoutPOST, '/api/plan/checkout', { plan: 'max' })).status).toBe(200);
    expect(create.mock.calls[0]![0]).toMatchObject({ customer: 'cus_test_1', line_items: [{ price: 'price_max', quantity: 1 }] });
    create.mockRestore();
    session.userId = null;
  });

  it('answers 400 naming plan for a plan without a Stripe price, an unknown plan or none', async () => {
    session.userId = (await accounts.createAccount()).userId;
    const create = vi.spyOn(stripe.checkout.sessions, 'create');
    for (const [body, messageCode] of [
      [{ plan: 'gift' }, 'plan.not_subscribable'],
      [{ plan: 'nope' }, 'plan.unknown'],
      [{}, 'plan.required'],
    ] as const) {
      const res = await post(checkoutPOST, '/api/plan/checkout', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request', param: 'plan', message_code: messageCode } });
    }
    expect(create).not.toHaveBeenCalled();
    create.mockRestore();
    session.userId = null;
  });

  it('upgrades a Stripe subscription in place with proration instead of a second checkout', async () => {
    const { account, subscriptionId, periodEnd } = await subscribed({ plan: 'starter' });
    session.userId = account.userId;
    const current = stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd });
    const retrieve = vi.spyOn(stripe.subscriptions, 'retrieve').mockResolvedValue(current as unknown as Stripe.Response<Stripe.Subscription>);
    const update = vi
      .spyOn(stripe.subscriptions, 'update')
      .mockResolvedValue(stripeSubscription({ id: subscriptionId, price: 'price_max', periodEnd }) as unknown as Stripe.Response<Stripe.Subscription>);
    const create = vi.spyOn(stripe.checkout.sessions, 'create');

    const res = await post(checkoutPOST, '/api/plan/checkout', { plan: 'max' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: 'http://localhost/dashboard/billing?plan=updated', updated: true, plan: 'max' });
    expect(create).not.toHaveBeenCalled();
    expect(update).toHaveBeenCalledWith(subscriptionId, {
      items: [{ id: `si_${subscriptionId}`, price: 'price_max' }],
      proration_behavior: 'create_prorations',
      metadata: { userId: account.userId, planId: 'max' },
    });
    expect(await db.subscription.count({ where: { userId: account.userId } })).toBe(1);
    expect((await subscriptions.currentSubscription(account.userId))?.planId).toBe('max');

    // The same plan again: 409, nothing asked of Stripe.
    update.mockClear();
    const again = await post(checkoutPOST, '/api/plan/checkout', { plan: 'max' });
    expect(again.status).toBe(409);
    expect(update).not.toHaveBeenCalled();
    for (const spy of [retrieve, update, create]) spy.mockRestore();
    session.userId = null;
  });

  it('subscribes the selected organization, not the person, and the webhook gives the organization the plan', async () => {
    const owner = await accounts.createAccount();
    const org = await (await import('@/lib/orgs/queries')).createOrganization({ id: owner.userId, email: owner.email }, { name: 'Plan Co' });
    session.userId = owner.userId;
    const create = vi
      .spyOn(stripe.checkout.sessions, 'create')
      .mockResolvedValue({ id: 'cs_test_org', url: 'https://checkout.stripe.test/org' } as unknown as Stripe.Response<Stripe.Checkout.Session>);
    const res = await post(checkoutPOST, '/api/plan/checkout', { plan: 'starter' }, { 'x-organization-id': org.id });
    expect(res.status).toBe(200);
    expect(create.mock.calls[0]![0]).toMatchObject({ client_reference_id: org.id, metadata: { userId: org.id, planId: 'starter' } });
    create.mockRestore();
    session.userId = null;

    const subscriptionId = id('sub');
    const retrieve = vi
      .spyOn(stripe.subscriptions, 'retrieve')
      .mockResolvedValue(
        stripeSubscription({ id: subscriptionId, price: 'price_starter', periodEnd: Date.now() + 30 * DAY }) as unknown as Stripe.Response<Stripe.Subscription>,
      );
    await deliver(event('checkout.session.completed', checkoutSession({ userId: org.id, subscriptionId })));
    retrieve.mockRestore();
    expect((await subscriptions.currentSubscription(org.id))?.stripeSubscriptionId).toBe(subscriptionId);
    expect(await subscriptions.currentSubscription(owner.userId)).toBeNull();
  });

  it('opens the billing portal for the account customer, and answers 404 before any subscription', async () => {
    const { account } = await subscribed();
    session.userId = account.userId;
    const create = vi
      .spyOn(stripe.billingPortal.sessions, 'create')
      .mockResolvedValue({ id: 'bps_1', url: 'https://billing.stripe.test/p/session/1' } as unknown as Stripe.Response<Stripe.BillingPortal.Session>);
    const res = await post(portalPOST, '/api/plan/portal');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: 'https://billing.stripe.test/p/session/1' });
    expect(create).toHaveBeenCalledWith({ customer: 'cus_test_1', return_url: 'http://localhost/dashboard/billing' });

    session.userId = (await accounts.createAccount()).userId;
    const none = await post(portalPOST, '/api/plan/portal');
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ error: { code: 'not_found', message_code: 'plan.no_stripe_customer' } });
    create.mockRestore();
    session.userId = null;
  });
});

// ---- the gateway bills the plan ------------------------------------------------------------

describe('a covered model after checkout.session.completed', () => {
  it('is billed to the plan (balance unchanged), still within the grace of a failed payment, and to the balance after it', async () => {
    const { account, subscriptionId } = await subscribed({ balanceUsd: '5' });

    const paid = await chat(account.apiKey);
    expect(paid.status).toBe(200);
    expect(paid.headers.get('x-service-billed-to')).toBe('plan');
    expect(paid.headers.get('x-service-plan')).toBe('starter');
    await accounts.waitFor(() => db.requestLog.findFirst({ where: { userId: account.userId, billedTo: 'plan' } }), 10_000);
    expect(await accounts.balanceOf(account.userId)).toBe('5.000000000000');

    // A failed renewal: past due, still served by the plan until graceUntil.
    await deliver(event('invoice.payment_failed', invoice({ subscriptionId, periodEnd: Date.now() + DAY })));
    const inGrace = await chat(account.apiKey);
    expect(inGrace.status).toBe(200);
    expect(inGrace.headers.get('x-service-billed-to')).toBe('plan');

    // The grace passes (moved into the past here) and the account's caches are told: the balance pays.
    await db.subscription.update({ where: { stripeSubscriptionId: subscriptionId }, data: { graceUntil: new Date(Date.now() - 1000) } });
    await subscriptions.announcePlanChange(account.userId);
    const after = await accounts.waitFor(async () => {
      const res = await chat(account.apiKey);
      return res.headers.get('x-service-billed-to') === 'balance' ? res : null;
    }, 10_000);
    expect(after.status).toBe(200);
  });
});

// ---- the billing page ----------------------------------------------------------------------

describe('the billing page with Stripe set up', () => {
  async function billingPage(account: { email: string; password: string }): Promise<string> {
    const login = await fetch(`${gateway.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: account.email, password: account.password }),
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const res = await fetch(`${gateway.url}/dashboard/billing`, { headers: { cookie } });
    expect(res.status).toBe(200);
    return res.text();
  }

  it('offers Subscribe on the plans Stripe sells, and none on a plan granted only by code', async () => {
    const html = await billingPage(await accounts.createAccount());
    expect(html).toContain('data-testid="plan-subscribe-starter"');
    expect(html).toContain('data-testid="plan-subscribe-max"');
    expect(html).not.toContain('data-testid="plan-subscribe-gift"');
    expect(html).not.toContain('data-testid="plan-manage-billing"');
  });

  it('shows Manage billing on the card of a plan paid with Stripe', async () => {
    const { account } = await subscribed();
    const html = await billingPage(account);
    expect(html).toContain('data-testid="plan-card"');
    expect(html).toContain('data-testid="plan-manage-billing"');
    expect(html).not.toContain('data-testid="plan-subscribe-');
  });
});
