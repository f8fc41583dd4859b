// GET /api/admin/audit?target_type=&target_id= - the audit log, newest first
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { listAudit } from '@/lib/audit';
import { toJson } from '@/lib/admin/serialize';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  const q = new URL(req.url).searchParams;
  return json({ data: toJson(await listAudit({ targetType: q.get('target_type') ?? undefined, targetId: q.get('target_id') ?? undefined, limit: 200 })) });
});
