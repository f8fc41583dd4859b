import { getServerSession } from 'next-auth';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { authOptions } from '@/lib/auth/options';
import { getAccount } from './queries';
import { sessionIsCurrent } from '@/lib/auth/session-epoch';
import { membershipOf, ORG_COOKIE, resolveActing } from '@/lib/orgs/access';
import { pageAllowed, type OrgRole } from '@/lib/orgs/roles';

export interface SessionUser {
  id: string;
  email: string;
}

/** Set by proxy.ts on every /dashboard and /admin request: the path and query asked for. */
const DASHBOARD_PATH_HEADER = 'x-dashboard-path';

/**
 * The signed-in user of a server component, or null: no session, or one the account has ended
 * (signed in before its sessionsValidFrom), or one of an account that no longer exists.
 */
export async function sessionUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions);
  const user = session?.user as { id?: string; email?: string | null } | undefined;
  if (!user?.id) return null;
  const account = await getAccount(user.id);
  if (!account || !sessionIsCurrent((session as { authTime?: unknown }).authTime, account.sessionsValidFrom)) return null;
  return { id: user.id, email: user.email ?? '' };
}

/** The signed-in user whose account still exists and whose session is current, or null. */
export const signedInAccountUser = sessionUser;

/** Only same-site paths, so a login link cannot be used to bounce users elsewhere. */
export function safeCallbackPath(value: string | string[] | null | undefined, fallback = '/dashboard'): string {
  const v = Array.isArray(value) ? value[0] : value;
  return v && v.startsWith('/') && !v.startsWith('//') && !v.startsWith('/\\') && !/[\u0000-\u001f]/.test(v) ? v : fallback;
}

/** The dashboard or console path this request asked for (with its query), else `fallback`. */
export async function requestedDashboardPath(fallback = '/dashboard'): Promise<string> {
  const path = (await headers()).get(DASHBOARD_PATH_HEADER);
  return path && /^\/(dashboard|admin)(\/|\?|$)/.test(path) ? safeCallbackPath(path, fallback) : fallback;
}

export function loginUrl(callbackPath: string): string {
  return `/login?callbackUrl=${encodeURIComponent(callbackPath)}`;
}

/** The signed-in user, or a redirect to /login that comes back to the page asked for afterwards. */
export async function requirePageUser(path?: string): Promise<SessionUser> {
  const user = await sessionUser();
  if (!user) redirect(loginUrl(await requestedDashboardPath(path)));
  return user;
}

/**
 * The account a dashboard page acts on (docs/decisions/040, 054): the organization chosen with the
 * switcher (cookie `gw_org`), else the person's own. `id` is that account's, so a page keyed by
 * account shows the organization's balance, keys and ledger; `allowed` is whether the person's role
 * there may see `path` (a refused page renders <RoleRefused>, the API would refuse its data anyway).
 */
export interface PageAccount {
  id: string;
  personId: string;
  email: string;
  role: OrgRole;
  personal: boolean;
  orgName: string | null;
  allowed: boolean;
}

export async function requirePageAccount(path: string): Promise<PageAccount> {
  const user = await requirePageUser(path);
  return actingForPage(user, path);
}

export async function actingForPage(user: SessionUser, path: string): Promise<PageAccount> {
  const chosen = (await cookies()).get(ORG_COOKIE)?.value ?? null;
  const acting = await resolveActing(user.id, { chosen });
  const orgName = acting.personal ? null : ((await membershipOf(acting.accountId, user.id))?.name ?? null);
  return {
    id: acting.accountId,
    personId: user.id,
    email: user.email,
    role: acting.role,
    personal: acting.personal,
    orgName,
    allowed: pageAllowed(acting.role, path),
  };
}
