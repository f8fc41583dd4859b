// GET /api/admin/audit?target_type=&target_id= - the audit log, newest first
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { listAudit } from '@/lib/audit';
import { toJson } from '@/lib/admin/serialize';
import { readQuery } from '@/lib/http/validate';
import { adminAudit } from '@/lib/schemas/admin/audit';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  const q = readQuery(req, adminAudit.list);
  return json({ data: toJson(await listAudit({ targetType: q.target_type, targetId: q.target_id, limit: 200 })) });
});
