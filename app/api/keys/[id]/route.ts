// PATCH /api/keys/:id - edit a key's name and controls; DELETE /api/keys/:id - revoke it (another account's id is 404)
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { keys } from '@/lib/schemas/keys';
import { revokeKey } from '@/lib/accounts/queries';
import { getKeyWithSpend, updateKey } from '@/lib/keys/queries';

export const PATCH = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const userId = await requireUserId(req);
  return json(await updateKey(userId, params.id, await readBody(req, keys.update)));
});

export const DELETE = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const userId = await requireUserId(req);
  const revoked = await revokeKey(userId, params.id);
  return json(await getKeyWithSpend(userId, revoked.id));
});
