// GET /api/admin/sso - the SSO providers the environment configures (no secrets) and every SSO-required domain
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { ssoDomainViews, ssoProviderViews } from '@/lib/admin/sso';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ providers: ssoProviderViews(req), domains: await ssoDomainViews() });
});
