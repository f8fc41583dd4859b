import { z } from 'zod';
import { route } from '../route';

// Single sign-on as the operator sees it: the configured providers and the SSO-required domains.

export const adminSso = {
  get: route({ method: 'GET', path: '/api/admin/sso', auth: 'admin', summary: 'SSO providers (no secrets) and every SSO-required domain' }),
  releaseDomain: route({
    method: 'DELETE',
    path: '/api/admin/sso/domains/{domain}',
    auth: 'admin',
    summary: "Release an organization's SSO-required domain (audited)",
    params: z.object({ domain: z.string().min(1).max(253) }),
  }),
};
