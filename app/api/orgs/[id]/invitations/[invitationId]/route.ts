// DELETE /api/orgs/:id/invitations/:invitationId - revoke an invitation (owner, admin): its link stops working
import { apiRoute, json } from '@/lib/http/api';
import { revokeInvitation } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const DELETE = apiRoute<{ id: string; invitationId: string }>(async (req, _ctx, params) =>
  json(await revokeInvitation(params.id, await requirePerson(req), params.invitationId)),
);
