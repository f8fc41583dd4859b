// POST /api/payment/webhook - Stripe events; the signature over the raw body is the only authentication
import { apiRoute, json } from '@/lib/http/api';
import { handleStripeEvent, verifyWebhook } from '@/lib/billing/stripe';
import { handlePlanEvent, isPlanEvent } from '@/lib/plans/stripe';

// No session and no CSRF check: Stripe calls this server-to-server. The body is read as text,
// never parsed first, because the signature covers the exact bytes. Subscription events (plans)
// and balance top-ups (recharges) share the endpoint and its signing secret.
export const POST = apiRoute(async (req) => {
  const event = verifyWebhook(await req.text(), req.headers.get('stripe-signature'));
  await (isPlanEvent(event) ? handlePlanEvent(event) : handleStripeEvent(event));
  return json({ received: true });
});
