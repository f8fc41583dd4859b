// POST /api/orgs/:id/transfer {user_id} - the owner makes another member the owner (and becomes an admin)
import { apiRoute, json, readJson } from '@/lib/http/api';
import { transferOwnership } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await transferOwnership(params.id, person, await readJson(req)));
});
