// GET /api/usage/export - the usage report (same from, to, group_by as /api/usage) as CSV, money exact
import { apiRoute, requireUserId } from '@/lib/http/api';
import { parseUsageQuery, usageCsv, usageReport } from '@/lib/dashboard/usage';
import { readQuery } from '@/lib/http/validate';
import { usage } from '@/lib/schemas/usage';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  readQuery(req, usage.export); // the shape; the filters' meaning is read below
  const query = parseUsageQuery(new URL(req.url).searchParams);
  const body = usageCsv(await usageReport(userId, query));
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="usage-${query.from}-${query.to}-by-${query.groupBy === 'none' ? 'day' : query.groupBy}.csv"`,
      'cache-control': 'no-store',
    },
  });
});
