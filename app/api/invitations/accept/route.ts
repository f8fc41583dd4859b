// POST /api/invitations/accept {token} - join the organization as the signed-in person (whose email
// must be the invited one); the organization is selected
import { apiRoute, json, readJson, requireString } from '@/lib/http/api';
import { acceptInvitation } from '@/lib/orgs/queries';
import { orgCookie, requirePerson } from '@/lib/http/orgs';

export const POST = apiRoute(async (req) => {
  const person = await requirePerson(req);
  const org = await acceptInvitation(requireString(await readJson(req), 'token'), person);
  return json(org, 200, { 'set-cookie': orgCookie(org.id) });
});
