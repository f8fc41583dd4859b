import { getServerSession } from 'next-auth';
import { redirect } from 'next/navigation';
import { authOptions } from '@/lib/auth/options';

export interface SessionUser {
  id: string;
  email: string;
}

/** The signed-in user of a server component, or null. */
export async function sessionUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions);
  const user = session?.user as { id?: string; email?: string | null } | undefined;
  return user?.id ? { id: user.id, email: user.email ?? '' } : null;
}

/** The signed-in user, or a redirect to /login that comes back to `path` afterwards. */
export async function requirePageUser(path = '/dashboard'): Promise<SessionUser> {
  const user = await sessionUser();
  if (!user) redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  return user;
}
