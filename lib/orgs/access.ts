// Which account a dashboard or /api call acts on, and as what (docs/decisions/040). The session is a
// person; the organization is the one chosen in the dashboard (cookie ORG_COOKIE, set by the switcher)
// or named explicitly (header X-Organization-Id or query `organization`). The person's own account is
// their personal organization, where they are the owner. Membership is read from the database on
// every call, so a removal or role change holds on the next request.
import { getDb, isUuid } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { apiAllowed, apiRule, PERSONAL_API, type OrgRole } from './roles';

export const ORG_COOKIE = 'gw_org';
export const ORG_HEADER = 'x-organization-id';
export const ORG_QUERY = 'organization';

export interface Acting {
  /** The account row that owns balance, keys, ledger and logs: the organization's, or the person's own. */
  accountId: string;
  /** The signed-in person. */
  personId: string;
  role: OrgRole;
  personal: boolean;
}

export async function membershipOf(orgId: string, personId: string): Promise<{ role: OrgRole; name: string } | null> {
  if (!isUuid(orgId)) return null;
  const db = await getDb();
  const m = await db.membership.findUnique({ where: { orgId_userId: { orgId, userId: personId } }, include: { org: true } });
  if (!m || m.org.deletedAt) return null;
  return { role: m.role, name: m.org.name };
}

/**
 * The acting account. An explicit organization the person is not a member of is 403; a chosen one
 * (the cookie) that no longer holds (removed, deleted) falls back to the personal account.
 */
export async function resolveActing(personId: string, requested: { explicit?: string | null; chosen?: string | null }): Promise<Acting> {
  const personal: Acting = { accountId: personId, personId, role: 'owner', personal: true };
  const explicit = requested.explicit?.trim();
  if (explicit) {
    if (explicit === personId || explicit === 'personal') return personal;
    const m = await membershipOf(explicit, personId);
    if (!m) throw codedError('forbidden', 'org.not_member');
    return { accountId: explicit, personId, role: m.role, personal: false };
  }
  const chosen = requested.chosen;
  if (!chosen || chosen === personId) return personal;
  const m = await membershipOf(chosen, personId);
  return m ? { accountId: chosen, personId, role: m.role, personal: false } : personal;
}

export function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) {
      try {
        return decodeURIComponent(v.join('='));
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** The acting account of an /api request; throws 403 when the role may not make this call. */
export async function actingForRequest(req: Request, personId: string): Promise<Acting> {
  const url = new URL(req.url);
  if (PERSONAL_API.test(url.pathname)) return { accountId: personId, personId, role: 'owner', personal: true };
  const acting = await resolveActing(personId, {
    explicit: req.headers.get(ORG_HEADER) ?? url.searchParams.get(ORG_QUERY),
    chosen: cookieValue(req.headers.get('cookie'), ORG_COOKIE),
  });
  if (acting.role === 'owner') return acting;
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  if (!apiAllowed(acting.role, method, url.pathname)) throw codedError('forbidden', 'org.role_refused', { role: acting.role });
  if (acting.role === 'developer') await checkOwn(acting, apiRule(method, url.pathname)?.own, url);
  return acting;
}

/** A developer's calls on keys and logs: only their own keys (created by them). */
async function checkOwn(acting: Acting, own: string | undefined, url: URL): Promise<void> {
  if (!own || own === 'key-list') return;
  const db = await getDb();
  const ownKey = async (keyId: string | null) =>
    keyId !== null && isUuid(keyId) && (await db.apiKey.count({ where: { id: keyId, userId: acting.accountId, createdById: acting.personId } })) > 0;
  const last = url.pathname.split('/').pop() ?? '';
  let ok = false;
  if (own === 'key-param') ok = await ownKey(url.searchParams.get('key'));
  else if (own === 'key-id') ok = await ownKey(last);
  else if (own === 'log-id') {
    const row = await db.requestLog.findFirst({ where: { id: last, userId: acting.accountId }, select: { apiKeyId: true } });
    ok = await ownKey(row?.apiKeyId ?? null);
  }
  if (!ok) throw codedError('forbidden', 'org.own_keys_only');
}
