// Route helpers for /api/orgs and /api/invitations: the signed-in person (never an organization).
import { requireActor } from '@/lib/http/api';
import { getAccount } from '@/lib/dashboard/queries';
import { codedError } from '@/lib/errors';
import { sessionCookieSettings } from '@/lib/auth/session-cookie';
import { ORG_COOKIE } from '@/lib/orgs/access';
import type { Person } from '@/lib/orgs/queries';

export async function requirePerson(req: Request): Promise<Person> {
  const acting = await requireActor(req);
  const account = await getAccount(acting.personId);
  if (!account) throw codedError('unauthenticated', 'auth.sign_in_first');
  return { id: account.id, email: account.email };
}

/** The cookie that carries the dashboard's chosen organization (empty: the personal account). */
export function orgCookie(orgId: string | null): string {
  const secure = sessionCookieSettings().options.secure ? '; Secure' : '';
  const value = orgId ?? '';
  return `${ORG_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax${secure}; Max-Age=${orgId ? 30 * 86400 : 0}`;
}
