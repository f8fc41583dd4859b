// Plans paid with Stripe Billing (issue 42 item 2; docs/decisions/048): Checkout in subscription mode,
// the customer portal, and the subscription webhooks. Stripe is the source of truth; a Subscription row
// (source 'stripe') is this deployment's copy, changed only by verified webhooks (and by the upgrade
// call's own answer). Every change is applied in one transaction with its ProcessedEvent row, so an
// event sent twice is applied once, and the account's caches are told after the commit.
import type Stripe from 'stripe';
import type { Prisma, Subscription } from '@/lib/generated/prisma/client';
import { getConfig, type PlanInfo } from '@/lib/config';
import { getDb } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { getStripe } from '@/lib/billing/stripe';
import { announcePlanChange, currentSubscription, planOrThrow } from '@/lib/plans/subscriptions';

type Tx = Prisma.TransactionClient;
const DAY_MS = 86_400_000;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type PlanEventOutcome = 'applied' | 'duplicate' | 'ignored' | 'rejected';

/** The event types this module applies (the webhook route sends the others to the recharge handler). */
export function isPlanEvent(event: Stripe.Event): boolean {
  switch (event.type) {
    case 'checkout.session.completed':
      return event.data.object.mode === 'subscription';
    case 'invoice.paid':
    case 'invoice.payment_failed':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return true;
    default:
      return false;
  }
}

function stripeOrThrow(): Stripe {
  const stripe = getStripe();
  if (!stripe) throw codedError('payments_not_configured', 'billing.not_configured');
  return stripe;
}

/** The plan a Stripe Checkout can sell: known, with a stripe_price_id; 400 naming `plan` otherwise. */
function subscribablePlan(planId: unknown): PlanInfo & { stripePriceId: string } {
  if (typeof planId !== 'string' || planId === '') throw codedError('invalid_request', 'plan.required', undefined, { param: 'plan' });
  const plan = planOrThrow(planId);
  if (!plan.stripePriceId) throw codedError('invalid_request', 'plan.not_subscribable', { plan: plan.id }, { param: 'plan' });
  return plan as PlanInfo & { stripePriceId: string };
}

/** The account's Stripe customer: the newest one any of its subscriptions recorded (one customer per account). */
export async function stripeCustomerOf(userId: string): Promise<string | null> {
  const row = await (
    await getDb()
  ).subscription.findFirst({
    where: { userId, stripeCustomerId: { not: null } },
    orderBy: { createdAt: 'desc' },
    select: { stripeCustomerId: true },
  });
  return row?.stripeCustomerId ?? null;
}

export type CheckoutAnswer = { url: string; updated?: false } | { url: string; updated: true; plan: string };

/**
 * Subscribes the account to `planId`: a Checkout Session in subscription mode, or, when the account
 * already pays a Stripe subscription, that subscription's price changed with proration (never a second one).
 */
export async function startPlanCheckout(userId: string, planId: unknown, origin: string): Promise<CheckoutAnswer> {
  const plan = subscribablePlan(planId);
  const stripe = stripeOrThrow();
  const current = await currentSubscription(userId);
  if (current?.source === 'stripe' && current.stripeSubscriptionId) {
    if (current.planId === plan.id) throw codedError('conflict', 'plan.already_subscribed', { plan: plan.id }, { param: 'plan' });
    await changePlanPrice(stripe, current, plan, userId);
    return { url: `${origin}/dashboard/billing?plan=updated`, updated: true, plan: plan.id };
  }
  const customer = await stripeCustomerOf(userId);
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: plan.stripePriceId, quantity: 1 }],
      ...(customer ? { customer } : {}),
      client_reference_id: userId,
      metadata: { userId, planId: plan.id },
      subscription_data: { metadata: { userId, planId: plan.id } },
      success_url: `${origin}/dashboard/billing?plan=success`,
      cancel_url: `${origin}/dashboard/billing?plan=cancelled`,
    });
  } catch (err) {
    log('error', 'stripe subscription checkout failed', { userId, plan: plan.id, ...errorFields(err) });
    throw codedError('upstream_error', 'billing.checkout_failed');
  }
  if (!session.url) throw codedError('upstream_error', 'billing.checkout_no_url');
  return { url: session.url };
}

/** Moves the subscription's one item to the plan's price; Stripe prorates the rest of the period. */
async function changePlanPrice(stripe: Stripe, current: Subscription, plan: PlanInfo & { stripePriceId: string }, userId: string): Promise<void> {
  const id = current.stripeSubscriptionId!;
  let updated: Stripe.Subscription;
  try {
    const sub = await stripe.subscriptions.retrieve(id);
    const item = sub.items.data[0];
    if (!item) throw new Error('subscription has no item');
    updated = await stripe.subscriptions.update(id, {
      items: [{ id: item.id, price: plan.stripePriceId }],
      proration_behavior: 'create_prorations',
      metadata: { userId, planId: plan.id },
    });
  } catch (err) {
    log('error', 'stripe subscription price change failed', { userId, subscription: id, plan: plan.id, ...errorFields(err) });
    throw codedError('upstream_error', 'billing.checkout_failed');
  }
  // Stripe's answer is authoritative: apply it now (the customer.subscription.updated event that follows changes nothing more).
  const db = await getDb();
  await db.subscription.update({ where: { id: current.id }, data: subscriptionFields(updated, current) });
  await announcePlanChange(userId);
}

/** A Billing Portal session for the account's Stripe customer (card changes, invoices, cancellation). */
export async function startBillingPortal(userId: string, origin: string): Promise<{ url: string }> {
  const stripe = stripeOrThrow();
  const customer = await stripeCustomerOf(userId);
  if (!customer) throw codedError('not_found', 'plan.no_stripe_customer');
  try {
    const session = await stripe.billingPortal.sessions.create({ customer, return_url: `${origin}/dashboard/billing` });
    return { url: session.url };
  } catch (err) {
    log('error', 'stripe billing portal session failed', { userId, ...errorFields(err) });
    throw codedError('upstream_error', 'billing.portal_failed');
  }
}

// ---- webhooks -------------------------------------------------------------------------------

const idOf = (v: string | { id: string } | null | undefined): string | null => (typeof v === 'string' ? v : (v?.id ?? null));

/** The period end Stripe gives a subscription (epoch ms): on its items since 2025, on the object before. */
function periodEndOf(sub: Stripe.Subscription): number | null {
  const ends = sub.items?.data?.map((i) => i.current_period_end).filter((n): n is number => typeof n === 'number') ?? [];
  const legacy = (sub as unknown as { current_period_end?: unknown }).current_period_end;
  if (typeof legacy === 'number') ends.push(legacy);
  return ends.length ? Math.max(...ends) * 1000 : null;
}

/** The configured plan whose stripe_price_id the subscription's item carries, if any. */
function planOfPrice(sub: Stripe.Subscription): PlanInfo | null {
  const prices = new Set(sub.items?.data?.map((i) => i.price?.id) ?? []);
  for (const plan of getConfig().plans.values()) if (plan.stripePriceId && prices.has(plan.stripePriceId)) return plan;
  return null;
}

/** Stripe's subscription status in ours; null: leave ours as it is (incomplete, paused). */
function statusOf(status: Stripe.Subscription.Status): Subscription['status'] | null {
  if (status === 'active' || status === 'trialing') return 'active';
  if (status === 'past_due' || status === 'unpaid') return 'past_due';
  if (status === 'canceled' || status === 'incomplete_expired') return 'canceled';
  return null;
}

const graceFrom = (now: number) => new Date(now + getConfig().planGraceDays * DAY_MS);

/** The fields of our row a Stripe subscription sets: its plan (by price), period end (never moved back), cancel flag, status. */
function subscriptionFields(sub: Stripe.Subscription, row: Subscription, now = Date.now()): Prisma.SubscriptionUpdateInput {
  const data: Prisma.SubscriptionUpdateInput = { cancelAtPeriodEnd: sub.cancel_at_period_end };
  const plan = planOfPrice(sub);
  if (plan) data.planId = plan.id;
  else log('warn', 'stripe subscription price matches no plan; plan kept', { subscription: sub.id, plan: row.planId });
  const end = periodEndOf(sub);
  if (end !== null && end > row.currentPeriodEnd.getTime()) data.currentPeriodEnd = new Date(end);
  const status = statusOf(sub.status);
  if (status === 'active') Object.assign(data, { status, graceUntil: null });
  else if (status === 'past_due') Object.assign(data, { status, graceUntil: row.graceUntil ?? graceFrom(now) });
  else if (status === 'canceled') Object.assign(data, { status, currentPeriodEnd: new Date(Math.min(now, row.currentPeriodEnd.getTime())) });
  return data;
}

type Applied = { outcome: PlanEventOutcome; userId?: string };

/**
 * Applies one verified subscription event. The ProcessedEvent row is written in the same transaction
 * as the change: a redelivered event finds it and changes nothing. A row that is canceled stays so
 * (a late `updated` or `invoice.paid` never revives it), and a period end only moves forward, so
 * events arriving out of order cannot undo a newer state.
 */
export async function handlePlanEvent(event: Stripe.Event): Promise<PlanEventOutcome> {
  let result: Applied;
  try {
    result = await apply(event);
  } catch (err) {
    // The unique event id: another delivery of this event committed first.
    if ((err as { code?: string }).code === 'P2002' && (await (await getDb()).processedEvent.findUnique({ where: { id: event.id } }))) return 'duplicate';
    throw err; // 500: Stripe retries later
  }
  if (result.outcome === 'applied' && result.userId) await announcePlanChange(result.userId);
  log('info', 'stripe plan event', { eventId: event.id, type: event.type, outcome: result.outcome, userId: result.userId });
  return result.outcome;
}

async function apply(event: Stripe.Event): Promise<Applied> {
  switch (event.type) {
    case 'checkout.session.completed':
      return checkoutCompleted(event, event.data.object);
    case 'invoice.paid':
      return invoicePaid(event, event.data.object);
    case 'invoice.payment_failed':
      return onRow(event, subscriptionIdOfInvoice(event.data.object), async (tx, row) => {
        if (row.status === 'canceled' || row.status === 'expired') return false;
        // Stripe retries a failed renewal several times: the grace runs from the first failure.
        const graceUntil = row.status === 'past_due' && row.graceUntil ? row.graceUntil : graceFrom(Date.now());
        await tx.subscription.update({ where: { id: row.id }, data: { status: 'past_due', graceUntil } });
        return true;
      });
    case 'customer.subscription.updated': {
      const sub = event.data.object;
      return onRow(event, sub.id, async (tx, row) => {
        if (row.status === 'canceled' || row.status === 'expired') return false;
        await tx.subscription.update({ where: { id: row.id }, data: subscriptionFields(sub, row) });
        return true;
      });
    }
    case 'customer.subscription.deleted':
      return onRow(event, event.data.object.id, async (tx, row) => {
        await tx.subscription.update({
          where: { id: row.id },
          data: {
            status: 'canceled',
            cancelAtPeriodEnd: false,
            graceUntil: null,
            currentPeriodEnd: new Date(Math.min(Date.now(), row.currentPeriodEnd.getTime())),
          },
        });
        return true;
      });
    default:
      return { outcome: 'ignored' };
  }
}

/**
 * Runs `change` on the row of a Stripe subscription, with the event recorded. An unknown subscription
 * is ignored, unless `create` makes its row (an invoice paid before its checkout's event arrived).
 */
async function onRow(
  event: Stripe.Event,
  subscriptionId: string | null,
  change: (tx: Tx, row: Subscription) => Promise<boolean>,
  create?: (tx: Tx) => Promise<Subscription | null>,
): Promise<Applied> {
  if (!subscriptionId) return { outcome: 'ignored' };
  const db = await getDb();
  return db.$transaction(async (tx): Promise<Applied> => {
    await tx.processedEvent.create({ data: { id: event.id, type: event.type } });
    const row = (await tx.subscription.findUnique({ where: { stripeSubscriptionId: subscriptionId } })) ?? (create ? await create(tx) : null);
    if (!row) {
      log('warn', 'stripe event for a subscription this deployment does not know', { eventId: event.id, type: event.type, subscription: subscriptionId });
      return { outcome: 'ignored' };
    }
    await lockAccount(tx, row.userId);
    const fresh = await tx.subscription.findUniqueOrThrow({ where: { id: row.id } });
    return (await change(tx, fresh)) ? { outcome: 'applied', userId: row.userId } : { outcome: 'ignored' };
  });
}

// One change of an account's plan at a time (grants lock the same row).
const lockAccount = (tx: Tx, userId: string) => tx.$queryRaw`SELECT 1 FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE`;

function subscriptionIdOfInvoice(invoice: Stripe.Invoice): string | null {
  const fromParent = idOf(invoice.parent?.subscription_details?.subscription);
  const legacy = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription;
  return fromParent ?? idOf(legacy);
}

/** The account and plan a session or subscription names in its metadata (ours: set at checkout). */
function ownerOf(metadata: Stripe.Metadata | null | undefined, clientReferenceId?: string | null): { userId: string; planId: string } | null {
  const userId = metadata?.userId ?? clientReferenceId ?? null;
  const planId = metadata?.planId ?? null;
  if (!userId || !uuidPattern.test(userId) || (clientReferenceId && clientReferenceId !== userId) || !planId) return null;
  return getConfig().plans.has(planId) ? { userId, planId } : null;
}

/** checkout.session.completed in subscription mode: the account's plan starts now (its windows' anchor). */
async function checkoutCompleted(event: Stripe.Event, session: Stripe.Checkout.Session): Promise<Applied> {
  const owner = ownerOf(session.metadata, session.client_reference_id);
  const subscriptionId = idOf(session.subscription);
  const fields = { eventId: event.id, sessionId: session.id, subscription: subscriptionId };
  if (!owner || !subscriptionId) {
    log('error', 'stripe subscription checkout without a usable account, plan or subscription', { ...fields, metadata: session.metadata });
    return { outcome: 'rejected' };
  }
  const db = await getDb();
  if (await db.processedEvent.findUnique({ where: { id: event.id } })) return { outcome: 'duplicate' };
  // The period end is on the subscription, which the session only names: read it (before the transaction, a network call).
  const sub =
    typeof session.subscription === 'object' && session.subscription ? session.subscription : await stripeOrThrow().subscriptions.retrieve(subscriptionId);
  const periodEnd = periodEndOf(sub);
  if (periodEnd === null) throw new Error(`stripe subscription ${subscriptionId} has no period end`);
  const plan = planOfPrice(sub)?.id ?? owner.planId;
  const now = Date.now();
  return db.$transaction(async (tx): Promise<Applied> => {
    await tx.processedEvent.create({ data: { id: event.id, type: event.type } });
    if (!(await tx.user.findUnique({ where: { id: owner.userId }, select: { id: true } }))) {
      log('error', 'stripe subscription checkout for an unknown account', fields);
      return { outcome: 'rejected' };
    }
    await lockAccount(tx, owner.userId);
    const data = {
      planId: plan,
      status: 'active' as const,
      graceUntil: null,
      cancelAtPeriodEnd: sub.cancel_at_period_end,
      stripeCustomerId: idOf(session.customer),
      currentPeriodEnd: new Date(periodEnd),
    };
    const existing = await tx.subscription.findUnique({ where: { stripeSubscriptionId: subscriptionId } });
    if (existing) {
      // Created by an earlier invoice.paid of the same subscription: the window anchor stays.
      if (existing.status === 'canceled' || existing.status === 'expired') return { outcome: 'ignored' };
      const end = Math.max(periodEnd, existing.currentPeriodEnd.getTime());
      await tx.subscription.update({ where: { id: existing.id }, data: { ...data, currentPeriodEnd: new Date(end) } });
    } else {
      await endOtherPlans(tx, owner.userId, now);
      await tx.subscription.create({
        data: { ...data, userId: owner.userId, source: 'stripe', startedAt: new Date(now), stripeSubscriptionId: subscriptionId },
      });
    }
    return { outcome: 'applied', userId: owner.userId };
  });
}

/** A live plan granted by code or operator (or an older subscription) ends when a paid one starts. */
async function endOtherPlans(tx: Tx, userId: string, now: number): Promise<void> {
  const current = await currentSubscription(userId, tx);
  if (!current) return;
  if (current.source === 'stripe') log('warn', 'a second stripe subscription replaces the live one here', { userId, previous: current.stripeSubscriptionId });
  await tx.subscription.update({ where: { id: current.id }, data: { status: 'canceled', currentPeriodEnd: new Date(now) } });
}

/**
 * invoice.paid: the period is paid through the invoice's period end; grace cleared; the hosted
 * invoice linked; and a zero ledger row (kind subscription, reference the invoice) so statements list
 * the charge. The card paid it, not the balance: the amount is in the row's note.
 */
async function invoicePaid(event: Stripe.Event, invoice: Stripe.Invoice): Promise<Applied> {
  const subscriptionId = subscriptionIdOfInvoice(invoice);
  const periodEnd = Math.max(0, ...(invoice.lines?.data ?? []).map((l) => l.period?.end ?? 0)) * 1000;
  return onRow(
    event,
    subscriptionId,
    async (tx, row) => {
      const data: Prisma.SubscriptionUpdateInput = { latestInvoiceUrl: invoice.hosted_invoice_url ?? row.latestInvoiceUrl };
      if (row.status !== 'canceled' && row.status !== 'expired') {
        Object.assign(data, { status: 'active', graceUntil: null });
        if (periodEnd > row.currentPeriodEnd.getTime()) data.currentPeriodEnd = new Date(periodEnd);
      }
      await tx.subscription.update({ where: { id: row.id }, data });
      if (!(await tx.ledgerEntry.findFirst({ where: { userId: row.userId, kind: 'subscription', reference: invoice.id }, select: { id: true } }))) {
        const user = await tx.user.findUniqueOrThrow({ where: { id: row.userId }, select: { balanceUsd: true } });
        const plan = getConfig().plans.get(row.planId);
        const paid = `${(invoice.amount_paid / 100).toFixed(2)} ${invoice.currency.toUpperCase()}`;
        await tx.ledgerEntry.create({
          data: {
            userId: row.userId,
            kind: 'subscription',
            amountUsd: '0',
            balanceAfterUsd: user.balanceUsd,
            reference: invoice.id,
            note: `Plan ${plan?.name ?? row.planId}: ${paid} paid by card (Stripe invoice ${invoice.number ?? invoice.id})`,
          },
        });
      }
      return true;
    },
    async (tx) => {
      // Stripe does not order its events: the first invoice may come before checkout.session.completed.
      // The subscription's metadata (set at checkout) names the account; the checkout event then finds the row.
      const owner = ownerOf(invoice.parent?.subscription_details?.metadata);
      if (!owner || !subscriptionId || !(await tx.user.findUnique({ where: { id: owner.userId }, select: { id: true } }))) return null;
      await lockAccount(tx, owner.userId);
      const now = Date.now();
      await endOtherPlans(tx, owner.userId, now);
      return tx.subscription.create({
        data: {
          userId: owner.userId,
          planId: owner.planId,
          source: 'stripe',
          startedAt: new Date(now),
          currentPeriodEnd: new Date(Math.max(periodEnd, now)),
          stripeSubscriptionId: subscriptionId,
          stripeCustomerId: idOf(invoice.customer),
        },
      });
    },
  );
}
