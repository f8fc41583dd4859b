// POST /api/payment/recharge - start a Stripe Checkout for a balance top-up
import { apiRoute, enforceLimit, json, requireActor } from '@/lib/http/api';
import { requireVerifiedEmail } from '@/lib/auth/email-verification';
import { readBody } from '@/lib/http/validate';
import { payment } from '@/lib/schemas/payment';
import { getConfig } from '@/lib/config';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { GatewayError } from '@/lib/errors';
import { createCheckoutSession, parseAmountUsd, paymentsConfigured } from '@/lib/billing/stripe';

export const POST = apiRoute(async (req) => {
  const { accountId: userId, personId } = await requireActor(req);
  // With verification on, the person paying must have proven their mailbox (docs/decisions/050).
  await requireVerifiedEmail(personId);
  const limit = getConfig().limits.recharge_per_user_per_minute;
  await enforceLimit(`gw:user:recharge:${userId}`, limit, `recharge: ${limit} per user per minute`);
  if (!paymentsConfigured()) throw new GatewayError('payments_not_configured', 'Payments are not set up on this deployment.');
  const body = await readBody(req, payment.recharge);
  const amount = parseAmountUsd(body.amount_usd);
  // Not req.url's origin: behind the server it is the bind address (localhost:3000), not the host the browser used.
  const origin = publicOriginOf(req);
  return json(await createCheckoutSession(userId, amount, origin));
});
