// PATCH /api/orgs/:id/members/:userId {role?, monthly_budget_usd?} - owner, admin;
// DELETE - remove the member (owner, admin; or the member leaving): their keys are revoked at once
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { orgs } from '@/lib/schemas/orgs';
import { removeMember, updateMember } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const PATCH = apiRoute<{ id: string; userId: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await updateMember(params.id, person, params.userId, await readBody(req, orgs.updateMember)));
});

export const DELETE = apiRoute<{ id: string; userId: string }>(async (req, _ctx, params) =>
  json(await removeMember(params.id, await requirePerson(req), params.userId)),
);
