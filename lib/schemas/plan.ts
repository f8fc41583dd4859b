import { z } from 'zod';
import { coded, route } from './route';

// Plans: the account's plan and those on offer, cancelling a granted one, Stripe checkout and portal.

export const planCancel = z.object({ action: z.literal('cancel') }).strict();
export const planCheckout = z.object({ plan: coded(z.string().min(1).max(64), 'plan.required').meta({ description: 'the id of a plan on offer' }) });

export const plan = {
  get: route({ method: 'GET', path: '/api/plan', auth: 'session', summary: "The account's plan with each window's use and reset, and the plans on offer" }),
  cancel: route({
    method: 'POST',
    path: '/api/plan',
    auth: 'session',
    summary: "End a granted plan at its period's end (a Stripe subscription is cancelled in the portal)",
    body: planCancel,
  }),
  checkout: route({
    method: 'POST',
    path: '/api/plan/checkout',
    auth: 'session',
    summary: 'A Stripe Checkout for a plan ({url}), or the running subscription moved to it with proration ({url, updated})',
    body: planCheckout,
  }),
  portal: route({ method: 'POST', path: '/api/plan/portal', auth: 'session', summary: "Stripe's billing portal for the account ({url})" }),
};
