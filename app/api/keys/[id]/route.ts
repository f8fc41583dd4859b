// DELETE /api/keys/:id - revoke one of the caller's keys (another account's id is 404)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { revokeKey } from '@/lib/accounts/queries';

export const DELETE = apiRoute<{ id: string }>(async (req, _ctx, params) => json(await revokeKey(await requireUserId(req), params.id)));
