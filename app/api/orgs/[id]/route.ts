// GET /api/orgs/:id - the organization and the caller's role; PATCH {name} - rename (owner, admin);
// DELETE - delete it (owner: every key revoked, the account closed, its ledger kept)
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { orgs } from '@/lib/schemas/orgs';
import { deleteOrganization, renameOrganization, requireOrgRole } from '@/lib/orgs/queries';
import { orgCookie, requirePerson } from '@/lib/http/orgs';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  const m = await requireOrgRole(params.id, person, 'view');
  return json({ id: params.id, name: m.name, role: m.role, personal: false });
});

export const PATCH = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await renameOrganization(params.id, person, await readBody(req, orgs.rename)));
});

export const DELETE = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await deleteOrganization(params.id, person), 200, { 'set-cookie': orgCookie(null) });
});
