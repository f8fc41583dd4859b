// PUT /api/admin/plans/:id - save a plan from the console (the config's fields; replaces the config's
//   plan of that id or adds one); every instance uses it within a second
// POST /api/admin/plans/:id - {"action": "retire" | "offer" | "reset"}: stop offering it (its
//   subscribers keep it), offer it again, or drop the console's edits (the config's version again)
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/http/validate';
import { adminPlans } from '@/lib/schemas/admin/plans';
import { getConfig } from '@/lib/config';
import { rawPlanOf, resetPlan, savePlan, setPlanRetired } from '@/lib/plans/catalogue';
import { serializePlan } from '@/lib/plans/serialize';

export const PUT = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, adminPlans.save);
  const plan = await savePlan(actor, params.id, body);
  return json({ ...serializePlan(plan, getConfig()), source: plan.source, retired: Boolean(plan.retired), config: rawPlanOf(plan) });
});

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const { action } = await readBody(req, adminPlans.act);
  if (action === 'reset') await resetPlan(actor, params.id);
  else await setPlanRetired(actor, params.id, action === 'retire');
  const plan = getConfig().plans.get(params.id);
  return json(plan ? { ...serializePlan(plan, getConfig()), source: plan.source, retired: Boolean(plan.retired) } : { id: params.id, removed: true });
});
