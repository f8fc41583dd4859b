// GET /api/alerts/settings - the account's alert settings; PUT - save them (the first save answers the signing secret once)
import { apiRoute, json, readJson, requireUserId } from '@/lib/http/api';
import { getAlertSettings, saveAlertSettings } from '@/lib/alerts/settings';

export const GET = apiRoute(async (req) => json(await getAlertSettings(await requireUserId(req))));

export const PUT = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  return json(await saveAlertSettings(userId, await readJson(req)));
});
