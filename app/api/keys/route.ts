// GET /api/keys - list the caller's keys; POST /api/keys - create one (the full key is answered once)
import { apiRoute, json, readJson, requireUserId } from '@/lib/http/api';
import { createKey, listKeys } from '@/lib/accounts/queries';

export const GET = apiRoute(async (req) => json({ data: await listKeys(await requireUserId(req)) }));

export const POST = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const body = await readJson(req);
  const name = typeof body.name === 'string' ? body.name : 'default';
  return json(await createKey(userId, name), 201);
});
