// POST /api/invitations/accept {token} - join the organization as the signed-in person (whose email
// must be the invited one); the organization is selected
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { invitations } from '@/lib/schemas/invitations';
import { acceptInvitation } from '@/lib/orgs/queries';
import { orgCookie, requirePerson } from '@/lib/http/orgs';

export const POST = apiRoute(async (req) => {
  const person = await requirePerson(req);
  const org = await acceptInvitation((await readBody(req, invitations.accept)).token, person);
  return json(org, 200, { 'set-cookie': orgCookie(org.id) });
});
