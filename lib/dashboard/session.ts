import { getServerSession } from 'next-auth';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { authOptions } from '@/lib/auth/options';
import { getAccount } from './queries';
import { sessionIsCurrent } from '@/lib/auth/session-epoch';

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
