// GET /api/admin/logs/:id - one request of any account, with its upstream attempts and price breakdown
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { getAdminLog } from '@/lib/admin/logs';
import { toJson } from '@/lib/admin/serialize';
import { priceBreakdownJson } from '@/lib/dashboard/serialize';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  await requireAdmin(req);
  const log = await getAdminLog(params.id);
  return json({ ...(toJson(log) as object), priceBreakdown: priceBreakdownJson(log) });
});
