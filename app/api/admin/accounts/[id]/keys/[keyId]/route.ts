// DELETE /api/admin/accounts/:id/keys/:keyId - revoke an account's key (every instance, at once)
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { adminRevokeKey } from '@/lib/admin/accounts';

export const DELETE = apiRoute<{ id: string; keyId: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  return json(await adminRevokeKey(actor, params.id, params.keyId));
});
