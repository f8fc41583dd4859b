// POST /api/payment/webhook - Stripe events; the signature over the raw body is the only authentication
import { apiRoute, json } from '@/lib/http/api';
import { handleStripeEvent, verifyWebhook } from '@/lib/billing/stripe';

// No session and no CSRF check: Stripe calls this server-to-server. The body is read as text,
// never parsed first, because the signature covers the exact bytes.
export const POST = apiRoute(async (req) => {
  const event = verifyWebhook(await req.text(), req.headers.get('stripe-signature'));
  await handleStripeEvent(event);
  return json({ received: true });
});
