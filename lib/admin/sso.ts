// The operator's view of single sign-on (docs/decisions/052): which providers the environment
// configures and the callback URL each must have registered with it, and every organization's
// SSO-required domains, of which the operator can release one (audited). No secret is shown: the
// client secrets stay in the environment, and the card says only whether a provider is enabled.
import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { codedError } from '@/lib/errors';
import { writeAudit, type Actor } from '@/lib/audit';
import { authBaseUrl } from '@/lib/auth/origin-rebase';
import { GOOGLE_ISSUER, ssoProviderConfigs, type SsoProviderId } from '@/lib/sso-config';

export interface SsoProviderView {
  id: SsoProviderId;
  name: string;
  enabled: boolean;
  /** OpenID Connect providers only. */
  issuer: string | null;
  /** Public (it is in every authorization URL); not the secret. */
  client_id: string | null;
  callback_url: string;
}

export interface SsoDomainView {
  domain: string;
  org_id: string;
  org_name: string | null;
  created_at: string;
}

const DEFAULT_NAMES: Record<SsoProviderId, string> = { oidc: 'OpenID Connect', google: 'Google', github: 'GitHub' };

/** Every provider the gateway knows, configured or not, with the callback URL for requests like `req`. */
export function ssoProviderViews(req: { headers: Pick<Headers, 'get'> }): SsoProviderView[] {
  const base = authBaseUrl(req);
  const configured = new Map(ssoProviderConfigs(env).map((c) => [c.id, c]));
  return (['oidc', 'google', 'github'] as const).map((id) => {
    const c = configured.get(id);
    return {
      id,
      name: c?.name ?? DEFAULT_NAMES[id],
      enabled: c !== undefined,
      issuer: c?.issuer ?? (id === 'google' ? GOOGLE_ISSUER : null),
      client_id: c?.clientId ?? null,
      callback_url: `${base}/callback/${id}`,
    };
  });
}

export async function ssoDomainViews(): Promise<SsoDomainView[]> {
  const db = await getDb();
  const rows = await db.ssoDomain.findMany({ orderBy: { domain: 'asc' }, take: 1000 });
  const orgs = await db.organization.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.orgId))] } }, select: { id: true, name: true } });
  const names = new Map(orgs.map((o) => [o.id, o.name]));
  return rows.map((r) => ({ domain: r.domain, org_id: r.orgId, org_name: names.get(r.orgId) ?? null, created_at: r.createdAt.toISOString() }));
}

/**
 * Releases a domain claim: password log-in works again for its addresses at once (the check reads
 * the table). The organization's audit trail and the console's both show who did it.
 */
export async function releaseSsoDomain(actor: Actor, rawDomain: string): Promise<SsoDomainView> {
  const domain = rawDomain.trim().toLowerCase();
  const db = await getDb();
  return db.$transaction(async (tx) => {
    const row = await tx.ssoDomain.findUnique({ where: { domain } });
    if (!row) throw codedError('not_found', 'admin.sso_domain_not_found', { domain: domain.slice(0, 100) });
    await tx.ssoDomain.delete({ where: { domain } });
    const org = await tx.organization.findUnique({ where: { id: row.orgId }, select: { name: true } });
    await writeAudit(actor, { action: 'admin.sso_domain_release', targetType: 'organization', targetId: row.orgId, before: { domain }, after: null }, tx);
    return { domain, org_id: row.orgId, org_name: org?.name ?? null, created_at: row.createdAt.toISOString() };
  });
}
