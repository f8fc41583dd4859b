// POST /api/plan/portal - a Stripe Billing Portal session for the account ({url}): card, invoices, cancellation
import { apiRoute, enforceLimit, json, requireUserId } from '@/lib/http/api';
import { getConfig } from '@/lib/config';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { codedError } from '@/lib/errors';
import { paymentsConfigured } from '@/lib/billing/stripe';
import { startBillingPortal } from '@/lib/plans/stripe';

export const POST = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const limit = getConfig().limits.recharge_per_user_per_minute;
  await enforceLimit(`gw:user:plan-portal:${userId}`, limit, `billing portal: ${limit} per user per minute`);
  if (!paymentsConfigured()) throw codedError('payments_not_configured', 'billing.not_configured');
  // Not req.url's origin: behind the server it is the bind address (localhost:3000), not the host the browser used.
  const origin = publicOriginOf(req);
  return json(await startBillingPortal(userId, origin));
});
