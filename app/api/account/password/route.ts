// POST /api/account/password - change the password (current one required); other sessions end, this one gets a fresh cookie
import { apiRoute, enforceLimit, json, requireUserId } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { account } from '@/lib/schemas/account';
import { changePassword } from '@/lib/accounts/settings';
import { getUser } from '@/lib/accounts/queries';
import { sessionCookie } from '@/lib/auth/session-cookie';

export const POST = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  // Each try is a bcrypt check of the current password: bounded like logins.
  await enforceLimit(`gw:user:password:${userId}`, 5, 'password change: 5 per account per minute');
  const body = await readBody(req, account.password);
  await changePassword(userId, body.current_password, body.new_password);
  const user = await getUser(userId);
  return json({ ok: true }, 200, { 'set-cookie': await sessionCookie(user) });
});
