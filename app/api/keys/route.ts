// GET /api/keys - list the caller's keys with their controls and spend (a developer: their own);
// POST /api/keys - create one (with optional controls; the full key is answered once)
import { apiRoute, json, requireActor } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { keys } from '@/lib/schemas/keys';
import { createKeyWithControls, listKeysWithSpend } from '@/lib/keys/queries';

export const GET = apiRoute(async (req) => {
  const acting = await requireActor(req);
  return json({ data: await listKeysWithSpend(acting.accountId, acting.role === 'developer' ? acting.personId : undefined) });
});

export const POST = apiRoute(async (req) => {
  const acting = await requireActor(req);
  const body = await readBody(req, keys.create);
  return json(await createKeyWithControls(acting.accountId, body, acting.personId), 201);
});
