// GET /api/usage - the caller's balance, tier limits, spend this month and today, and 30 days of daily totals
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { getOverview } from '@/lib/dashboard/overview';
import { overviewJson } from '@/lib/dashboard/serialize';

export const GET = apiRoute(async (req) => json(overviewJson(await getOverview(await requireUserId(req)))));
