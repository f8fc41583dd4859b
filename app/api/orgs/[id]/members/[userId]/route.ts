// PATCH /api/orgs/:id/members/:userId {role?, monthly_budget_usd?} - owner, admin;
// DELETE - remove the member (owner, admin; or the member leaving): their keys are revoked at once
import { apiRoute, json, readJson } from '@/lib/http/api';
import { removeMember, updateMember } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const PATCH = apiRoute<{ id: string; userId: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await updateMember(params.id, person, params.userId, await readJson(req)));
});

export const DELETE = apiRoute<{ id: string; userId: string }>(async (req, _ctx, params) =>
  json(await removeMember(params.id, await requirePerson(req), params.userId)),
);
