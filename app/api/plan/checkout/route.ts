// POST /api/plan/checkout - {"plan": id}: a Stripe Checkout in subscription mode ({url}), or, while the
//   account pays a Stripe subscription, its price changed to the plan's with proration ({url, updated})
import { apiRoute, enforceLimit, json, requireActor } from '@/lib/http/api';
import { requireVerifiedEmail } from '@/lib/auth/email-verification';
import { readBody } from '@/lib/http/validate';
import { plan } from '@/lib/schemas/plan';
import { getConfig } from '@/lib/config';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { codedError } from '@/lib/errors';
import { paymentsConfigured } from '@/lib/billing/stripe';
import { startPlanCheckout } from '@/lib/plans/stripe';

export const POST = apiRoute(async (req) => {
  const { accountId: userId, personId } = await requireActor(req);
  // With verification on, the person paying must have proven their mailbox (docs/decisions/050).
  await requireVerifiedEmail(personId);
  const limit = getConfig().limits.recharge_per_user_per_minute;
  await enforceLimit(`gw:user:plan-checkout:${userId}`, limit, `plan checkout: ${limit} per user per minute`);
  if (!paymentsConfigured()) throw codedError('payments_not_configured', 'billing.not_configured');
  const body = await readBody(req, plan.checkout);
  // Not req.url's origin: behind the server it is the bind address (localhost:3000), not the host the browser used.
  const origin = publicOriginOf(req);
  return json(await startPlanCheckout(userId, body.plan, origin));
});
