// POST /api/alerts/:id/dismiss - hide an alert from the dashboard banner (another account's id is 404)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { dismissAlertEvent } from '@/lib/alerts/events';

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => json(await dismissAlertEvent(await requireUserId(req), params.id)));
