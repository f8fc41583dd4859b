// GET /api/orgs - the signed-in person's organizations (their personal account first) and which is
// selected; POST /api/orgs - create one (the creator is its owner; it is selected)
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { orgs } from '@/lib/schemas/orgs';
import { createOrganization, listOrganizations } from '@/lib/orgs/queries';
import { orgCookie, requirePerson } from '@/lib/http/orgs';
import { cookieValue, ORG_COOKIE } from '@/lib/orgs/access';

export const GET = apiRoute(async (req) => {
  const person = await requirePerson(req);
  const data = await listOrganizations(person);
  const chosen = cookieValue(req.headers.get('cookie'), ORG_COOKIE);
  const selected = data.find((o) => o.id === chosen)?.id ?? person.id;
  return json({ data, selected });
});

export const POST = apiRoute(async (req) => {
  const person = await requirePerson(req);
  const org = await createOrganization(person, await readBody(req, orgs.create));
  return json(org, 201, { 'set-cookie': orgCookie(org.id) });
});
