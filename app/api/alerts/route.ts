// GET /api/alerts - the account's recent alert events (newest first; ?undismissed=1 for the banner's)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { listAlertEvents } from '@/lib/alerts/events';
import { readQuery } from '@/lib/http/validate';
import { alerts } from '@/lib/schemas/alerts';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const undismissedOnly = readQuery(req, alerts.list).undismissed === '1';
  return json({ data: await listAlertEvents(userId, { undismissedOnly }) });
});
