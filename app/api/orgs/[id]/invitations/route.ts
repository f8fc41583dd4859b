// GET /api/orgs/:id/invitations - invitations and their state; POST {email, role} - invite (owner,
// admin): the signed link is mailed when SMTP is configured, and answered (`link`) either way
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { invitations } from '@/lib/schemas/invitations';
import { createInvitation, listInvitations } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { sendInvitationMail } from '@/lib/mail/messages';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => json({ data: await listInvitations(params.id, await requirePerson(req)) }));

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  const created = await createInvitation(params.id, person, await readBody(req, invitations.create), publicOriginOf(req));
  const mailed = await sendInvitationMail(created.invitation.email, {
    org: created.org_name,
    inviter: person.email,
    link: created.link,
    role: created.invitation.role,
  });
  return json({ ...created.invitation, link: created.link, mailed }, 201);
});
