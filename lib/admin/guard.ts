import { cache } from 'react';
import { forbidden, unauthorized } from 'next/navigation';
import { assertSameOrigin } from '@/lib/http/api';
import { codedError } from '@/lib/errors';
import { sessionUser } from '@/lib/dashboard/session';
import { roleOf } from './roles';
import type { Actor } from '@/lib/audit';

/** The operator behind a session, or null when the session is not an active admin's. */
async function adminActor(userId: string): Promise<Actor | null> {
  const account = await roleOf(userId);
  if (!account || account.role !== 'admin' || account.status !== 'active') return null;
  return { id: userId, label: account.email };
}

/**
 * Admin API guard: 401 without a session, 403 for anyone but an active admin. Mutations also pass
 * the same-origin (CSRF) check of the account API. The role is read from the database on every
 * call (admin traffic is light), so a demotion takes effect at once.
 */
export async function requireAdmin(req: Request): Promise<Actor> {
  if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method)) assertSameOrigin(req);
  // A session the account has ended (sign out everywhere) is no session, as on the account API.
  const user = await sessionUser();
  if (!user) throw codedError('unauthenticated', 'auth.sign_in_first');
  const actor = await adminActor(user.id);
  if (!actor) throw codedError('forbidden', 'admin.operator_only');
  return actor;
}

/**
 * The operator page guard: 401 (app/unauthorized.tsx) without a current session, 403
 * (app/forbidden.tsx) for anyone but an active admin. Next renders a page and its layouts in
 * parallel, so the console's layout cannot protect its pages: every admin page calls this first,
 * and so does every loader in lib/admin/console.ts, before any query. Once per render (React cache).
 */
export const requireOperator = cache(async (): Promise<Actor> => {
  // sessionUser also refuses a session the account has ended (sign out everywhere).
  const user = await sessionUser();
  if (!user) unauthorized();
  const actor = await adminActor(user.id);
  if (!actor) forbidden();
  return actor;
});

/** Whether the signed-in user of a page is an active admin (for the dashboard's "Admin" link). */
export async function isAdminSession(userId: string): Promise<boolean> {
  return (await adminActor(userId)) !== null;
}
