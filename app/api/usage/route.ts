// GET /api/usage - the caller's balance, limits and 30 days of daily totals; with from, to or
// group_by (day, model, key): the usage report for that range of UTC days, broken down by the group;
// group_by=key also carries `by_key`: each key's spend this month and in total (USD and CNY)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { getOverview } from '@/lib/dashboard/overview';
import { overviewJson } from '@/lib/dashboard/serialize';
import { parseUsageQuery, usageReport, usageReportJson } from '@/lib/dashboard/usage';
import { usageByKey } from '@/lib/keys/queries';
import { cacheSavingsByDay, daySavingJson } from '@/lib/cache/savings';
import { readQuery } from '@/lib/http/validate';
import { usage } from '@/lib/schemas/usage';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  readQuery(req, usage.get); // the shape; the filters' meaning is read below
  const params = new URL(req.url).searchParams;
  if (!params.has('from') && !params.has('to') && !params.has('group_by') && !params.has('group')) return json(overviewJson(await getOverview(userId)));
  const query = parseUsageQuery(params);
  const [raw, savings] = await Promise.all([usageReport(userId, query), cacheSavingsByDay(userId, query.from, query.to)]);
  // What the upstreams' prompt caches saved per day (lib/cache/savings.ts).
  const report = { ...usageReportJson(raw), cache_savings: savings.map(daySavingJson) };
  return json(params.get('group_by') === 'key' ? { ...report, by_key: await usageByKey(userId) } : report);
});
