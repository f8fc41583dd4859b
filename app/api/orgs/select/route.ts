// POST /api/orgs/select {id} - the organization the dashboard and /api act on from now (the
// person's own id, or null, for their personal account)
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { orgs } from '@/lib/schemas/orgs';
import { orgCookie, requirePerson } from '@/lib/http/orgs';
import { membershipOf } from '@/lib/orgs/access';
import { codedError } from '@/lib/errors';

export const POST = apiRoute(async (req) => {
  const person = await requirePerson(req);
  const body = await readBody(req, orgs.select);
  const id = typeof body.id === 'string' && body.id !== person.id ? body.id : null;
  if (id === null) return json({ selected: person.id, personal: true }, 200, { 'set-cookie': orgCookie(null) });
  const m = await membershipOf(id, person.id);
  if (!m) throw codedError('forbidden', 'org.not_member', undefined, { param: 'id' });
  return json({ selected: id, personal: false, role: m.role, name: m.name }, 200, { 'set-cookie': orgCookie(id) });
});
