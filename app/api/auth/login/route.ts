// POST /api/auth/login - check email and password, answer the account and a session cookie
// (10 per IP per minute; 10 failures per account and address, 50 per address, per 15 minutes)
import { apiRoute, assertSameOrigin, enforceLimit, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { auth } from '@/lib/schemas/auth';
import { publicUser } from '@/lib/accounts/queries';
import { signInWithPassword } from '@/lib/auth/login';
import { getConfig } from '@/lib/config';
import { sessionCookie } from '@/lib/auth/session-cookie';

export const POST = apiRoute(async (req, ctx) => {
  assertSameOrigin(req, { required: false });
  const limit = getConfig().limits.login_per_ip_per_minute;
  await enforceLimit(`gw:ip:login:${ctx.ip}`, limit, `login: ${limit} per IP per minute`);
  const body = await readBody(req, auth.login);
  const user = await signInWithPassword(body.email, body.password, ctx.ip);
  return json({ user: publicUser(user) }, 200, { 'set-cookie': await sessionCookie(user) });
});
