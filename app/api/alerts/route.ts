// GET /api/alerts - the account's recent alert events (newest first; ?undismissed=1 for the banner's)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { listAlertEvents } from '@/lib/alerts/events';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const undismissedOnly = new URL(req.url).searchParams.get('undismissed') === '1';
  return json({ data: await listAlertEvents(userId, { undismissedOnly }) });
});
