// POST /api/orgs/:id/transfer {user_id} - the owner makes another member the owner (and becomes an admin)
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { orgs } from '@/lib/schemas/orgs';
import { transferOwnership } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await transferOwnership(params.id, person, await readBody(req, orgs.transfer)));
});
