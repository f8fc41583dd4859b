// DELETE /api/admin/sso/domains/:domain - release an organization's SSO-required domain (audited)
import { apiRoute, json } from '@/lib/http/api';
import { parseWith } from '@/lib/http/validate';
import { requireAdmin } from '@/lib/admin/guard';
import { releaseSsoDomain } from '@/lib/admin/sso';
import { adminSso } from '@/lib/schemas/admin/sso';

export const DELETE = apiRoute<{ domain: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const { domain } = parseWith(adminSso.releaseDomain.params, params);
  return json({ released: await releaseSsoDomain(actor, domain) });
});
