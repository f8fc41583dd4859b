// Stripe recharge against the real PostgreSQL: webhook signature, crediting, idempotency per event
// and per payment, and the recharge bounds. No network: events are signed locally with
// stripe.webhooks.generateTestHeaderString, exactly as Stripe signs them.
//
// lib/env.ts parses process.env ONCE, when it is first imported. The webhook secret must therefore be
// in process.env before any app module loads: it is set at the top of this file and every app module
// is imported dynamically in beforeAll (a static import would be hoisted above the assignment).
// STRIPE_SECRET_KEY stays unset, as on a deployment without payments: createCheckoutSession must
// validate the amount first and then answer 503 payments_not_configured.

import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const WEBHOOK_SECRET = 'whsec_test_payments_suite_secret';
process.env.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET;
delete process.env.STRIPE_SECRET_KEY;

// requireUserId reads the next-auth session, which needs a Next request scope: stand in for it.
const session = vi.hoisted(() => ({ userId: null as string | null }));
vi.mock('next-auth', () => ({
  getServerSession: async () => (session.userId ? { user: { id: session.userId } } : null),
}));

type StripeLib = typeof import('@/lib/billing/stripe');
type Route = (req: Request, route: { params: Promise<Record<string, string>> }) => Promise<Response>;

let db: Awaited<ReturnType<typeof import('@/lib/db').getDb>>;
let stripeLib: StripeLib;
let webhookPOST: Route;
let rechargePOST: Route;
let planCheckoutPOST: Route;
let GatewayErrorClass: typeof import('@/lib/errors').GatewayError;

beforeAll(async () => {
  db = await (await import('@/lib/db')).getDb();
  stripeLib = await import('@/lib/billing/stripe');
  webhookPOST = (await import('@/app/api/payment/webhook/route')).POST;
  rechargePOST = (await import('@/app/api/payment/recharge/route')).POST;
  planCheckoutPOST = (await import('@/app/api/plan/checkout/route')).POST;
  GatewayErrorClass = (await import('@/lib/errors')).GatewayError;
});

afterAll(async () => {
  await (await import('@/lib/limits/runtime')).getLimiter().close();
  await db?.$disconnect();
});

// ---- helpers ---------------------------------------------------------------------------

const routeCtx = { params: Promise.resolve({}) };

async function makeUser() {
  return db.user.create({ data: { email: `pay-${randomUUID().slice(0, 12)}@test.local`, passwordHash: 'not-a-real-hash' } });
}

/** A pending Payment as createCheckoutSession leaves it, for a made-up Checkout Session id. */
async function makePayment(userId: string, usd = '20') {
  return db.payment.create({ data: { userId, stripeSessionId: `cs_test_${randomUUID().replace(/-/g, '')}`, amountUsd: usd, status: 'pending' } });
}

interface SessionFields {
  type?: string;
  eventId?: string;
  sessionId: string;
  userId: string;
  paymentId?: string;
  amountCents?: number;
  paymentStatus?: 'paid' | 'unpaid' | 'no_payment_required';
  clientReferenceId?: string;
}

function sessionEvent(f: SessionFields): string {
  return JSON.stringify({
    id: f.eventId ?? `evt_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: f.type ?? 'checkout.session.completed',
    data: {
      object: {
        id: f.sessionId,
        object: 'checkout.session',
        mode: 'payment',
        amount_total: f.amountCents ?? 2000,
        currency: 'usd',
        payment_status: f.paymentStatus ?? 'paid',
        status: 'complete',
        client_reference_id: f.clientReferenceId ?? f.userId,
        metadata: f.paymentId ? { userId: f.userId, paymentId: f.paymentId } : { userId: f.userId },
      },
    },
  });
}

function webhookRequest(payload: string, signature: string | null = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== null) headers['stripe-signature'] = signature;
  return new Request('http://localhost/api/payment/webhook', { method: 'POST', headers, body: payload });
}

async function deliver(payload: string) {
  const res = await webhookPOST(webhookRequest(payload), routeCtx);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function balanceOf(userId: string): Promise<string> {
  const user = await db.user.findUniqueOrThrow({ where: { id: userId } });
  return user.balanceUsd.toFixed(2);
}

const rechargeEntries = (userId: string) => db.ledgerEntry.findMany({ where: { userId, kind: 'recharge' } });

async function expectGatewayError(promise: Promise<unknown>, code: string, status: number): Promise<Error> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayErrorClass);
  expect(err).toMatchObject({ code, status });
  return err as Error;
}

// ---- webhook -----------------------------------------------------------------------------

describe('POST /api/payment/webhook', () => {
  it('rejects a payload signed with another secret with 400 and credits nothing', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const payload = sessionEvent({ sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id });
    const forged = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_someone_else' });

    const res = await webhookPOST(webhookRequest(payload, forged), routeCtx);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { code: 'invalid_request', message: 'Invalid Stripe signature', message_code: 'billing.bad_signature', params: {} },
    });
    expect(await balanceOf(user.id)).toBe('0.00');
    expect(await rechargeEntries(user.id)).toHaveLength(0);
    expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('pending');
  });

  it('rejects a missing signature header and a body altered after signing with 400', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const payload = sessionEvent({ sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });

    expect((await webhookPOST(webhookRequest(payload, null), routeCtx)).status).toBe(400);
    const tampered = payload.replace('"amount_total":2000', '"amount_total":200000');
    expect((await webhookPOST(webhookRequest(tampered, signature), routeCtx)).status).toBe(400);
    expect(await balanceOf(user.id)).toBe('0.00');
  });

  it('credits a paid checkout.session.completed once: balance, one recharge ledger entry, payment paid', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const res = await deliver(sessionEvent({ sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id, amountCents: 2000 }));

    expect(res).toEqual({ status: 200, body: { received: true } });
    expect(await balanceOf(user.id)).toBe('20.00');
    const entries = await rechargeEntries(user.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'recharge', reference: payment.id });
    expect(entries[0].amountUsd.toFixed(2)).toBe('20.00');
    expect(entries[0].balanceAfterUsd.toFixed(2)).toBe('20.00');
    const paid = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(paid.status).toBe('paid');
    expect(paid.paidAt).toBeInstanceOf(Date);
  });

  it('answers a replay of the same event with 200 and credits nothing more', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const payload = sessionEvent({ sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id });

    expect((await deliver(payload)).status).toBe(200);
    expect(await deliver(payload)).toEqual({ status: 200, body: { received: true } });
    expect(await balanceOf(user.id)).toBe('20.00');
    expect(await rechargeEntries(user.id)).toHaveLength(1);
  });

  it('credits nothing more for async_payment_succeeded (a different event id) on a session already paid', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const fields = { sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id };

    expect((await deliver(sessionEvent(fields))).status).toBe(200);
    const second = await deliver(sessionEvent({ ...fields, type: 'checkout.session.async_payment_succeeded' }));
    expect(second.status).toBe(200);
    expect(await balanceOf(user.id)).toBe('20.00');
    expect(await rechargeEntries(user.id)).toHaveLength(1);
  });

  it('credits once when the same event arrives twice at the same moment alongside async_payment_succeeded', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const fields = { sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id };
    const completed = sessionEvent(fields);

    const results = await Promise.all([
      deliver(completed),
      deliver(completed),
      deliver(sessionEvent({ ...fields, type: 'checkout.session.async_payment_succeeded' })),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await balanceOf(user.id)).toBe('20.00');
    expect(await rechargeEntries(user.id)).toHaveLength(1);
  });

  it('credits nothing for a completed session whose payment_status is unpaid, then credits on async_payment_succeeded', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const fields = { sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id };

    expect((await deliver(sessionEvent({ ...fields, paymentStatus: 'unpaid' }))).status).toBe(200);
    expect(await balanceOf(user.id)).toBe('0.00');
    expect(await rechargeEntries(user.id)).toHaveLength(0);
    expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('pending');

    expect((await deliver(sessionEvent({ ...fields, type: 'checkout.session.async_payment_succeeded' }))).status).toBe(200);
    expect(await balanceOf(user.id)).toBe('20.00');
    expect(await rechargeEntries(user.id)).toHaveLength(1);
  });

  it('marks the payment failed on async_payment_failed and credits nothing', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const res = await deliver(
      sessionEvent({
        type: 'checkout.session.async_payment_failed',
        sessionId: payment.stripeSessionId,
        userId: user.id,
        paymentId: payment.id,
        paymentStatus: 'unpaid',
      }),
    );
    expect(res.status).toBe(200);
    expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('failed');
    expect(await balanceOf(user.id)).toBe('0.00');
  });

  it('creates the Payment row from the session when this deployment has none, and credits it', async () => {
    const user = await makeUser();
    const sessionId = `cs_test_${randomUUID().replace(/-/g, '')}`;
    expect((await deliver(sessionEvent({ sessionId, userId: user.id, amountCents: 1234 }))).status).toBe(200);

    const payment = await db.payment.findUniqueOrThrow({ where: { stripeSessionId: sessionId } });
    expect(payment).toMatchObject({ userId: user.id, status: 'paid' });
    expect(payment.amountUsd.toFixed(2)).toBe('12.34');
    expect(await balanceOf(user.id)).toBe('12.34');
    expect((await rechargeEntries(user.id))[0]?.reference).toBe(payment.id);
  });

  it('credits nobody when the session names a different user than its Payment row', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const payment = await makePayment(owner.id);
    const res = await deliver(sessionEvent({ sessionId: payment.stripeSessionId, userId: other.id, paymentId: payment.id }));

    expect(res.status).toBe(200); // retrying cannot fix it: acknowledged, logged, not credited
    expect(await balanceOf(owner.id)).toBe('0.00');
    expect(await balanceOf(other.id)).toBe('0.00');
    expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('pending');
  });

  it('acknowledges event types it does not handle', async () => {
    const user = await makeUser();
    const payment = await makePayment(user.id);
    const res = await deliver(sessionEvent({ type: 'checkout.session.expired', sessionId: payment.stripeSessionId, userId: user.id }));
    expect(res).toEqual({ status: 200, body: { received: true } });
    expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('pending');
  });
});

// ---- recharge ----------------------------------------------------------------------------

describe('createCheckoutSession', () => {
  it('rejects an amount below the minimum with 400 naming both bounds', async () => {
    const user = await makeUser();
    const err = await expectGatewayError(
      stripeLib.createCheckoutSession(user.id, stripeLib.parseAmountUsd('4.99'), 'http://localhost'),
      'invalid_request',
      400,
    );
    expect(err.message).toBe('Recharge amount must be between $5.00 and $1,000.00.');
  });

  it('rejects an amount above the maximum with 400', async () => {
    const user = await makeUser();
    await expectGatewayError(stripeLib.createCheckoutSession(user.id, stripeLib.parseAmountUsd(1000.01), 'http://localhost'), 'invalid_request', 400);
  });

  it('rejects fractions of a cent with 400', async () => {
    const user = await makeUser();
    await expectGatewayError(stripeLib.createCheckoutSession(user.id, stripeLib.parseAmountUsd('10.005'), 'http://localhost'), 'invalid_request', 400);
  });

  it('answers 503 payments_not_configured for a valid amount when STRIPE_SECRET_KEY is not set', async () => {
    const user = await makeUser();
    await expectGatewayError(stripeLib.createCheckoutSession(user.id, stripeLib.parseAmountUsd('20'), 'http://localhost'), 'payments_not_configured', 503);
    expect(await db.payment.count({ where: { userId: user.id } })).toBe(0);
  });

  it('parseAmountUsd refuses values that are not amounts', () => {
    for (const bad of ['', 'ten', '1e3', null, undefined, Number.NaN, {}]) {
      expect(() => stripeLib.parseAmountUsd(bad)).toThrow(GatewayErrorClass);
    }
  });
});

describe('POST /api/payment/recharge', () => {
  const rechargeRequest = () =>
    new Request('http://localhost/api/payment/recharge', {
      method: 'POST',
      // A same-origin browser request: the CSRF guard needs its Origin to match the Host.
      headers: { 'content-type': 'application/json', host: 'localhost', origin: 'http://localhost' },
      body: JSON.stringify({ amount_usd: 20 }),
    });

  it('answers 401 without a session', async () => {
    session.userId = null;
    expect((await rechargePOST(rechargeRequest(), routeCtx)).status).toBe(401);
  });

  it('answers 503 payments_not_configured without Stripe, and 429 on the 6th request in a minute', async () => {
    session.userId = (await makeUser()).id;
    for (let i = 0; i < 5; i += 1) {
      const res = await rechargePOST(rechargeRequest(), routeCtx);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: { code: 'payments_not_configured', message: 'Payments are not set up on this deployment.' } });
    }
    const limited = await rechargePOST(rechargeRequest(), routeCtx);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    session.userId = null;
  });
});

describe('POST /api/plan/checkout without Stripe', () => {
  it('answers 503 payments_not_configured, as the recharge does', async () => {
    session.userId = (await makeUser()).id;
    const res = await planCheckoutPOST(
      new Request('http://localhost/api/plan/checkout', {
        method: 'POST',
        headers: { 'content-type': 'application/json', host: 'localhost', origin: 'http://localhost' },
        body: JSON.stringify({ plan: 'any' }),
      }),
      routeCtx,
    );
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'payments_not_configured', message: 'Payments are not set up on this deployment.' } });
    session.userId = null;
  });
});

// ---- hardening (#26, item 17): amounts and concurrent deliveries ----------------------------

describe('POST /api/payment/webhook: amounts Stripe should never send, and concurrent first deliveries', () => {
  it('ignores a negative, zero, fractional or over-the-maximum amount_total with 200 (no Stripe retries) and moves no money', async () => {
    for (const amountCents of [-2000, 0, 20.5, 1e13]) {
      const user = await makeUser();
      const payment = await makePayment(user.id);
      const res = await deliver(sessionEvent({ sessionId: payment.stripeSessionId, userId: user.id, paymentId: payment.id, amountCents }));
      expect(res, String(amountCents)).toEqual({ status: 200, body: { received: true } });
      expect(await balanceOf(user.id), String(amountCents)).toBe('0.00');
      expect(await db.ledgerEntry.count({ where: { userId: user.id } }), String(amountCents)).toBe(0);
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).status, String(amountCents)).toBe('pending');
    }
  });

  it('credits once, with 200 to each, when completed and async_payment_succeeded for a session it has no Payment row for arrive together', async () => {
    for (let round = 0; round < 3; round++) {
      const user = await makeUser();
      const sessionId = `cs_test_${randomUUID().replace(/-/g, '')}`;
      const fields = { sessionId, userId: user.id, amountCents: 1500 };
      const results = await Promise.all([
        deliver(sessionEvent(fields)),
        deliver(sessionEvent({ ...fields, type: 'checkout.session.async_payment_succeeded' })),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect(await balanceOf(user.id)).toBe('15.00');
      expect(await rechargeEntries(user.id)).toHaveLength(1);
      expect(await db.payment.count({ where: { stripeSessionId: sessionId } })).toBe(1);
    }
  });

  it('credits once when one event for a new session is delivered twice at the same moment', async () => {
    const user = await makeUser();
    const payload = sessionEvent({ sessionId: `cs_test_${randomUUID().replace(/-/g, '')}`, userId: user.id, amountCents: 700 });
    const results = await Promise.all([deliver(payload), deliver(payload), deliver(payload)]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await balanceOf(user.id)).toBe('7.00');
    expect(await rechargeEntries(user.id)).toHaveLength(1);
  });
});
