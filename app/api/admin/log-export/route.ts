// GET /api/admin/log-export - the request-log export's sink, cursor, last error and replays
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { logExportStatus } from '@/lib/log-export/exporter';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json(await logExportStatus());
});
