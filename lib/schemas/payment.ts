import { z } from 'zod';
import { coded, route, usdText } from './route';

// Paying in: a Stripe recharge, a redemption code, and Stripe's webhook.

export const recharge = z.object({ amount_usd: coded(usdText, 'billing.amount_invalid') });
export const redeem = z.object({ code: z.string().min(1).max(100) });

export const payment = {
  recharge: route({
    method: 'POST',
    path: '/api/payment/recharge',
    auth: 'session',
    summary: 'Start a Stripe Checkout for a top-up ({url, id}); the balance is credited by the webhook',
    body: recharge,
  }),
  redeem: route({ method: 'POST', path: '/api/payment/redeem', auth: 'session', summary: 'Redeem a code for balance (and/or a plan)', body: redeem }),
  webhook: route({
    method: 'POST',
    path: '/api/payment/webhook',
    auth: 'stripe',
    summary: "Stripe's events, signed with STRIPE_WEBHOOK_SECRET (the raw body is verified, not parsed first)",
    bodyTypes: ['application/json'],
  }),
};
