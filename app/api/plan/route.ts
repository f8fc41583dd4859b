// GET /api/plan - the caller's plan with each window's use and reset, and the plans on offer
// POST /api/plan - {"action": "cancel"}: a granted plan (code, operator) ends at its period's end;
//   a Stripe subscription is changed and cancelled in Stripe's portal (POST /api/plan/portal)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { plan } from '@/lib/schemas/plan';
import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { currentSubscription, endPlan, planStatus } from '@/lib/plans/subscriptions';
import { serializePlan, serializePlanStatus } from '@/lib/plans/serialize';
import { offeredPlans } from '@/lib/plans/catalogue';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const cfg = getConfig();
  return json({ current: serializePlanStatus(await planStatus(userId), cfg), plans: offeredPlans(cfg).map((p) => serializePlan(p, cfg)) });
});

export const POST = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  await readBody(req, plan.cancel);
  const current = await currentSubscription(userId);
  if (!current) throw codedError('not_found', 'plan.none');
  if (current.source === 'stripe') throw codedError('conflict', 'plan.stripe_managed');
  await endPlan(userId, 'period_end');
  return json({ current: serializePlanStatus(await planStatus(userId), getConfig()) });
});
