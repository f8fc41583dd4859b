// GET /api/admin/logs/:id - one request of any account, with its upstream attempts
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { getAdminLog } from '@/lib/admin/logs';
import { toJson } from '@/lib/admin/serialize';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  await requireAdmin(req);
  return json(toJson(await getAdminLog(params.id)));
});
