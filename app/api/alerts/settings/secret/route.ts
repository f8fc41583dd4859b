// POST /api/alerts/settings/secret - a new webhook signing secret, answered once
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { regenerateAlertSecret } from '@/lib/alerts/settings';

export const POST = apiRoute(async (req) => json(await regenerateAlertSecret(await requireUserId(req))));
