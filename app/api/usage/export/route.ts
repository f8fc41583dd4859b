// GET /api/usage/export - the usage report (same from, to, group_by as /api/usage) as CSV, money exact
import { apiRoute, requireUserId } from '@/lib/http/api';
import { parseUsageQuery, usageCsv, usageReport } from '@/lib/dashboard/usage';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
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
