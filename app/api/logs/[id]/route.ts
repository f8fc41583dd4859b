// GET /api/logs/:id - one of the caller's requests with its attempts and route reason (another account's id is 404)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { requireLog } from '@/lib/dashboard/queries';
import { logDetailJson } from '@/lib/dashboard/serialize';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => json(logDetailJson(await requireLog(await requireUserId(req), params.id))));
