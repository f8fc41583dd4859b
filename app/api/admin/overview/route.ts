// GET /api/admin/overview - requests, failed requests, revenue and spend (today / 7 d / 30 d), breakdowns, channel health
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { overview } from '@/lib/admin/stats';
import { toJson } from '@/lib/admin/serialize';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json(toJson(await overview()));
});
