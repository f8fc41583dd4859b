// GET /api/alerts/settings - the account's alert settings; PUT - save them (the first save answers the signing secret once)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { alerts } from '@/lib/schemas/alerts';
import { getAlertSettings, saveAlertSettings } from '@/lib/alerts/settings';

export const GET = apiRoute(async (req) => json(await getAlertSettings(await requireUserId(req))));

export const PUT = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  return json(await saveAlertSettings(userId, await readBody(req, alerts.saveSettings)));
});
