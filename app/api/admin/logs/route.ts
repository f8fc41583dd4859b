// GET /api/admin/logs - every account's requests: account, model, channel, status, fallback, from, to; cursor pages
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { listAdminLogs, parseAdminLogFilters } from '@/lib/admin/logs';
import { decodeCursor, parseLimit } from '@/lib/dashboard/filters';
import { toJson } from '@/lib/admin/serialize';
import { readQuery } from '@/lib/http/validate';
import { adminLogs } from '@/lib/schemas/admin/logs';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  readQuery(req, adminLogs.list); // the shape; the filters' meaning is read below
  const params = new URL(req.url).searchParams;
  const filters = await parseAdminLogFilters(params);
  const after = params.get('starting_after');
  const page = await listAdminLogs(filters, {
    limit: parseLimit(params.get('limit'), 50, 200),
    startingAfter: after ? decodeCursor(after, 'starting_after') : undefined,
  });
  return json({ data: toJson(page.data), next_cursor: page.nextCursor });
});
