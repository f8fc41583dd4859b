// GET /api/keys - list the caller's keys with their controls and spend; POST /api/keys - create one
// (with optional controls; the full key is answered once)
import { apiRoute, json, readJson, requireUserId } from '@/lib/http/api';
import { createKeyWithControls, listKeysWithSpend } from '@/lib/keys/queries';

export const GET = apiRoute(async (req) => json({ data: await listKeysWithSpend(await requireUserId(req)) }));

export const POST = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const body = await readJson(req);
  return json(await createKeyWithControls(userId, body), 201);
});
