// GET /api/usage - the caller's balance, limits and 30 days of daily totals; with from, to or
// group_by (day, model, key): the usage report for that range of UTC days, broken down by the group
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { getOverview } from '@/lib/dashboard/overview';
import { overviewJson } from '@/lib/dashboard/serialize';
import { parseUsageQuery, usageReport, usageReportJson } from '@/lib/dashboard/usage';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const params = new URL(req.url).searchParams;
  if (!params.has('from') && !params.has('to') && !params.has('group_by')) return json(overviewJson(await getOverview(userId)));
  return json(usageReportJson(await usageReport(userId, parseUsageQuery(params))));
});
