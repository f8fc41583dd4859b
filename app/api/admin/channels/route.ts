// GET /api/admin/channels - every configured channel with its live state (never its key)
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { channelStates } from '@/lib/admin/stats';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ data: await channelStates() });
});
