import { getServerSession } from 'next-auth';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { authOptions } from '@/lib/auth/options';
import { getAccount } from './queries';

export interface SessionUser {
  id: string;
  email: string;
}

/** Set by proxy.ts on every /dashboard request: the path and query asked for. */
const DASHBOARD_PATH_HEADER = 'x-dashboard-path';

/** The signed-in user of a server component, or null. */
export async function sessionUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions);
  const user = session?.user as { id?: string; email?: string | null } | undefined;
  return user?.id ? { id: user.id, email: user.email ?? '' } : null;
}

/** The signed-in user whose account still exists, or null (a session can outlive a deleted account). */
export async function signedInAccountUser(): Promise<SessionUser | null> {
  const user = await sessionUser();
  return user && (await getAccount(user.id)) ? user : null;
}

/** Only same-site paths, so a login link cannot be used to bounce users elsewhere. */
export function safeCallbackPath(value: string | string[] | null | undefined, fallback = '/dashboard'): string {
  const v = Array.isArray(value) ? value[0] : value;
  return v && v.startsWith('/') && !v.startsWith('//') && !v.startsWith('/\\') && !/[\u0000-\u001f]/.test(v) ? v : fallback;
}

/** The dashboard path this request asked for (with its query), else `fallback`. */
export async function requestedDashboardPath(fallback = '/dashboard'): Promise<string> {
  const path = (await headers()).get(DASHBOARD_PATH_HEADER);
  return path && path.startsWith('/dashboard') ? safeCallbackPath(path, fallback) : fallback;
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
