import { z } from 'zod';
import { coded, idParam, route } from './route';

// Invitations to an organization: made and revoked by its owner or admins, accepted by the invited person.

export const invitationCreate = z.object({
  email: coded(z.string().trim().min(3).max(320), 'auth.email_invalid'),
  role: coded(z.enum(['admin', 'developer', 'billing']), 'org.role_invalid')
    .optional()
    .meta({ description: 'developer by default' }),
});
export const invitationAccept = z.object({
  token: coded(z.string().min(1).max(2048), 'request.field_required', { field: 'token' }).meta({ description: "the invitation link's token" }),
});

export const invitations = {
  list: route({ method: 'GET', path: '/api/orgs/{id}/invitations', auth: 'session', summary: 'Invitations and their state', params: idParam }),
  create: route({
    method: 'POST',
    path: '/api/orgs/{id}/invitations',
    auth: 'session',
    summary: 'Invite (owner, admin): the signed link is mailed when SMTP is configured, and answered either way',
    params: idParam,
    body: invitationCreate,
    status: 201,
  }),
  revoke: route({
    method: 'DELETE',
    path: '/api/orgs/{id}/invitations/{invitationId}',
    auth: 'session',
    summary: 'Revoke an invitation: its link stops working',
    params: idParam.extend({ invitationId: z.string().max(64) }),
  }),
  accept: route({
    method: 'POST',
    path: '/api/invitations/accept',
    auth: 'session',
    summary: 'Join the organization as the signed-in person (whose email must be the invited one)',
    body: invitationAccept,
  }),
};
