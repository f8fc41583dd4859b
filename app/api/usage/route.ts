// GET /api/usage - the caller's balance, tier limits, spend this month and today, and 30 days of daily totals;
// with ?group_by=key also `by_key`: each key's spend this month and in total (USD and CNY)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { GatewayError } from '@/lib/errors';
import { getOverview } from '@/lib/dashboard/overview';
import { overviewJson } from '@/lib/dashboard/serialize';
import { usageByKey } from '@/lib/keys/queries';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const groupBy = new URL(req.url).searchParams.get('group_by');
  if (groupBy !== null && groupBy !== 'key') throw new GatewayError('invalid_request', '"group_by": the only grouping is "key".', { param: 'group_by' });
  const overview = overviewJson(await getOverview(userId));
  return json(groupBy === 'key' ? { ...overview, by_key: await usageByKey(userId) } : overview);
});
