// GET /api/admin/plans - every plan (the config's and the console's), with where it is defined,
// whether it is retired, its fields as the config writes them and its live subscribers
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { getConfig } from '@/lib/config';
import { getDb } from '@/lib/db';
import { rawPlanOf } from '@/lib/plans/catalogue';
import { serializePlan } from '@/lib/plans/serialize';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  const cfg = getConfig();
  const counts = await (
    await getDb()
  ).subscription.groupBy({ by: ['planId'], where: { status: { in: ['active', 'past_due'] }, currentPeriodEnd: { gt: new Date() } }, _count: true });
  const live = new Map(counts.map((c) => [c.planId, c._count]));
  return json({
    data: [...cfg.plans.values()].map((p) => ({
      ...serializePlan(p, cfg),
      source: p.source,
      retired: Boolean(p.retired),
      subscribers: live.get(p.id) ?? 0,
      config: rawPlanOf(p),
    })),
  });
});
