// DELETE /api/admin/sso/domains/:domain - release an organization's SSO-required domain (audited)
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { releaseSsoDomain } from '@/lib/admin/sso';

export const DELETE = apiRoute<{ domain: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  return json({ released: await releaseSsoDomain(actor, params.domain) });
});
