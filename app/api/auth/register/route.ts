// POST /api/auth/register - create an account (3 per IP per minute)
import { apiRoute, assertSameOrigin, enforceLimit, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { auth } from '@/lib/schemas/auth';
import { createUser, publicUser } from '@/lib/accounts/queries';
import { getConfig } from '@/lib/config';
import { sessionCookie } from '@/lib/auth/session-cookie';

export const POST = apiRoute(async (req, ctx) => {
  assertSameOrigin(req, { required: false });
  const limit = getConfig().limits.register_per_ip_per_minute;
  await enforceLimit(`gw:ip:register:${ctx.ip}`, limit, `register: ${limit} per IP per minute`);
  const body = await readBody(req, auth.register);
  const user = await createUser({ email: body.email, password: body.password });
  return json({ user: publicUser(user) }, 201, { 'set-cookie': await sessionCookie(user) });
});
