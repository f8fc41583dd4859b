import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { env } from '@/lib/env';
import { getDb } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { formatPico, parseDecimal } from '@/lib/money';
import { formatMoney } from '@/lib/format';
import { applyPendingCredits, creditBalance, picoToDecimal } from '@/lib/billing/ledger';
import type { Prisma } from '@/lib/generated/prisma/client';

// Balance top-ups through Stripe Checkout. The webhook is the only place money is credited:
// the browser's return to success_url proves nothing.

const PICO_PER_CENT = 10_000_000_000n;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Until Checkout answers, a new Payment row holds this unique stand-in for the session id. */
const sessionPlaceholder = (paymentId: string) => `pending:${paymentId}`;

/** The Stripe API client of this process, or null when STRIPE_SECRET_KEY is not set. */
export function getStripe(): Stripe | null {
  return singleton('stripe', () => (env.STRIPE_SECRET_KEY ? new Stripe(env.STRIPE_SECRET_KEY, stripeApiBaseOptions(env.STRIPE_API_BASE)) : null));
}

/** The client's host/port/protocol for STRIPE_API_BASE (stripe-mock or a test double); none: api.stripe.com. */
export function stripeApiBaseOptions(base: URL | undefined): Stripe.StripeConfig {
  if (!base) return {};
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return { host: base.hostname, port: base.port || (protocol === 'http' ? 80 : 443), protocol };
}

export function paymentsConfigured(): boolean {
  return getStripe() !== null;
}

/** `amount_usd` from a request body (number or decimal string) in pico-USD; 400 when it is not a plain amount. */
export function parseAmountUsd(value: unknown): bigint {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value : null;
  try {
    if (text !== null) return parseDecimal(text, 12);
  } catch {
    /* answered below */
  }
  throw codedError('invalid_request', 'billing.amount_invalid', undefined, { param: 'amount_usd' });
}

/** Starts a Checkout Session for a top-up of `amount` pico-USD; the Payment row stays pending until the webhook. */
export async function createCheckoutSession(userId: string, amount: bigint, origin: string): Promise<{ url: string; id: string }> {
  const { rechargeMin, rechargeMax } = getConfig();
  if (amount < rechargeMin || amount > rechargeMax) {
    throw codedError('invalid_request', 'billing.amount_range', { min: formatMoney(rechargeMin), max: formatMoney(rechargeMax) }, { param: 'amount_usd' });
  }
  if (amount % PICO_PER_CENT !== 0n) {
    throw codedError('invalid_request', 'billing.amount_cents', undefined, { param: 'amount_usd' });
  }
  const stripe = getStripe();
  if (!stripe) throw codedError('payments_not_configured', 'billing.not_configured');

  const db = await getDb();
  const paymentId = randomUUID();
  await db.payment.create({
    data: { id: paymentId, userId, stripeSessionId: sessionPlaceholder(paymentId), amountUsd: picoToDecimal(amount), status: 'pending' },
  });
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: { currency: 'usd', unit_amount: Number(amount / PICO_PER_CENT), product_data: { name: 'API balance top-up' } },
          },
        ],
        client_reference_id: userId,
        metadata: { userId, paymentId },
        success_url: `${origin}/dashboard/billing?recharge=success`,
        cancel_url: `${origin}/dashboard/billing?recharge=cancelled`,
      },
      { idempotencyKey: paymentId },
    );
  } catch (err) {
    log('error', 'stripe checkout session failed', { userId, paymentId, ...errorFields(err) });
    await db.payment.update({ where: { id: paymentId }, data: { status: 'failed' } });
    throw codedError('upstream_error', 'billing.checkout_failed');
  }
  await db.payment.update({ where: { id: paymentId }, data: { stripeSessionId: session.id } });
  if (!session.url) throw codedError('upstream_error', 'billing.checkout_no_url');
  return { url: session.url, id: session.id };
}

/** Verifies the Stripe-Signature header over the raw body; 400 when it does not match, 503 without a webhook secret. */
export function verifyWebhook(rawBody: string, signature: string | null): Stripe.Event {
  const secret = env.STRIPE_WEBHOOK_SECRET;
  if (!secret) throw codedError('payments_not_configured', 'billing.not_configured');
  if (!signature) throw codedError('invalid_request', 'billing.bad_signature');
  try {
    // Verification is pure HMAC: the static helper needs no API key.
    return Stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch {
    throw codedError('invalid_request', 'billing.bad_signature');
  }
}

export type StripeEventOutcome = 'credited' | 'already_paid' | 'marked_failed' | 'duplicate' | 'unpaid' | 'rejected' | 'ignored';

/**
 * Applies one verified Stripe event. Idempotent per event id (ProcessedEvent) and per payment
 * (paid at most once), both in the transaction that credits the balance.
 */
export async function handleStripeEvent(event: Stripe.Event): Promise<StripeEventOutcome> {
  switch (event.type) {
    case 'checkout.session.completed':
      // A subscription's checkout (lib/plans/stripe.ts) is no top-up: its amount never reaches the balance.
      if (event.data.object.mode !== 'payment') return 'ignored';
      if (event.data.object.payment_status !== 'paid') return 'unpaid'; // async methods settle later
      return settleSession(event, event.data.object, 'paid');
    case 'checkout.session.async_payment_succeeded':
      return settleSession(event, event.data.object, 'paid');
    case 'checkout.session.async_payment_failed':
      return settleSession(event, event.data.object, 'failed');
    default:
      return 'ignored';
  }
}

type Settled = { outcome: StripeEventOutcome; userId?: string; amount?: bigint };

async function settleSession(event: Stripe.Event, session: Stripe.Checkout.Session, result: 'paid' | 'failed'): Promise<StripeEventOutcome> {
  const metaUser = session.metadata?.userId ?? null;
  const refUser = session.client_reference_id ?? null;
  const userId = metaUser ?? refUser;
  const fields = { eventId: event.id, sessionId: session.id, userId };
  if (!userId || (metaUser && refUser && metaUser !== refUser) || !uuidPattern.test(userId)) {
    log('error', 'stripe session has no usable user id', { ...fields, metaUser, refUser });
    return 'rejected';
  }
  if (session.amount_total === null || session.currency?.toLowerCase() !== 'usd') {
    log('error', 'stripe session is not a USD amount', { ...fields, amountTotal: session.amount_total, currency: session.currency });
    return 'rejected';
  }
  const amount = checkedAmount(session.amount_total);
  if (amount === null) {
    // Answered 200 like every event we will never apply: a non-2xx makes Stripe retry for days.
    log('warn', 'stripe session amount is not a recharge we credit; event ignored', { ...fields, amountTotal: session.amount_total });
    return 'rejected';
  }

  const db = await getDb();
  // Two deliveries for one session that has no Payment row yet (`completed` and
  // `async_payment_succeeded`, or one event sent twice) both insert one: the unique session id lets
  // one in, the other's transaction fails and runs again, finds the row and credits nothing.
  for (let attempt = 1; ; attempt++) {
    try {
      return await settleOnce(db, event, session, result, userId, amount, fields);
    } catch (err) {
      if ((err as { code?: string }).code !== 'P2002') throw err; // 500: Stripe retries later
      if (await db.processedEvent.findUnique({ where: { id: event.id } })) return 'duplicate'; // Stripe redelivered an event we already applied
      if (attempt >= 3) throw err;
    }
  }
}

/**
 * `amount_total` in pico-USD when it is a recharge we credit: a whole positive number of cents no
 * larger than the configured maximum recharge (a discount may take it below the minimum). Null
 * otherwise: a negative amount would debit, a fraction is not a cent amount at all.
 */
function checkedAmount(amountTotal: unknown): bigint | null {
  if (typeof amountTotal !== 'number' || !Number.isSafeInteger(amountTotal) || amountTotal <= 0) return null;
  const amount = BigInt(amountTotal) * PICO_PER_CENT;
  return amount <= getConfig().rechargeMax ? amount : null;
}

async function settleOnce(
  db: Awaited<ReturnType<typeof getDb>>,
  event: Stripe.Event,
  session: Stripe.Checkout.Session,
  result: 'paid' | 'failed',
  userId: string,
  amount: bigint,
  fields: Record<string, unknown>,
): Promise<StripeEventOutcome> {
  const settled = await db.$transaction(async (tx): Promise<Settled> => {
    await tx.processedEvent.create({ data: { id: event.id, type: event.type } });
    const payment = await findOrCreatePayment(tx, session, userId, amount);
    if (!payment) {
      log('error', 'stripe session for an unknown account', fields);
      return { outcome: 'rejected' };
    }
    if (payment.userId !== userId) {
      log('error', 'stripe session user does not match the payment', { ...fields, paymentUserId: payment.userId, paymentId: payment.id });
      return { outcome: 'rejected' };
    }
    if (result === 'failed') {
      await tx.payment.updateMany({ where: { id: payment.id, status: 'pending' }, data: { status: 'failed' } });
      return { outcome: 'marked_failed' };
    }
    // The row lock makes a concurrent `completed` + `async_payment_succeeded` pair credit once.
    const marked = await tx.payment.updateMany({
      where: { id: payment.id, status: { not: 'paid' } },
      data: { status: 'paid', paidAt: new Date() },
    });
    if (marked.count === 0) return { outcome: 'already_paid' };
    if (picoToDecimal(amount).toFixed(12) !== payment.amountUsd.toFixed(12)) {
      log('warn', 'stripe amount differs from the requested recharge; crediting what was paid', {
        ...fields,
        paymentId: payment.id,
        requested: payment.amountUsd.toFixed(2),
        paid: formatPico(amount, 2),
      });
    }
    await creditBalance(userId, 'recharge', amount, { reference: payment.id, tx });
    return { outcome: 'credited', userId, amount };
  });
  if (settled.outcome === 'credited' && settled.userId && settled.amount !== undefined) {
    await applyPendingCredits({ userId: settled.userId }); // what it cannot apply now, the reconcilers do
    log('info', 'recharge credited', { ...fields, amountUsd: formatPico(settled.amount) });
  }
  return settled.outcome;
}

/**
 * The Payment row of a session: by session id, else the row this deployment created for it (metadata.paymentId,
 * still holding its placeholder), else a new one built from the session. Null when the account does not exist here.
 */
async function findOrCreatePayment(tx: Prisma.TransactionClient, session: Stripe.Checkout.Session, userId: string, amount: bigint) {
  const bySession = await tx.payment.findUnique({ where: { stripeSessionId: session.id } });
  if (bySession) return bySession;
  const paymentId = session.metadata?.paymentId;
  if (paymentId && uuidPattern.test(paymentId)) {
    const byId = await tx.payment.findUnique({ where: { id: paymentId } });
    if (byId && byId.stripeSessionId === sessionPlaceholder(byId.id)) {
      return tx.payment.update({ where: { id: byId.id }, data: { stripeSessionId: session.id } });
    }
  }
  if (!(await tx.user.findUnique({ where: { id: userId }, select: { id: true } }))) return null;
  return tx.payment.create({ data: { userId, stripeSessionId: session.id, amountUsd: picoToDecimal(amount), status: 'pending' } });
}
