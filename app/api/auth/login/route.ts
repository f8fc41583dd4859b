// POST /api/auth/login - check email and password, answer the account and a session cookie (10 per IP per minute)
import { apiRoute, enforceLimit, json, readJson, requireString } from '@/lib/http/api';
import { publicUser } from '@/lib/accounts/queries';
import { verifyCredentials } from '@/lib/auth/login';
import { getConfig } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { sessionCookie } from '@/lib/auth/session-cookie';

export const POST = apiRoute(async (req, ctx) => {
  const limit = getConfig().limits.login_per_ip_per_minute;
  await enforceLimit(`gw:ip:login:${ctx.ip}`, limit, `login: ${limit} per IP per minute`);
  const body = await readJson(req);
  const user = await verifyCredentials(requireString(body, 'email'), requireString(body, 'password'));
  if (!user) throw new GatewayError('unauthenticated', 'Invalid email or password.');
  if (user.status === 'suspended') throw new GatewayError('account_suspended', 'This account is suspended.');
  const cookie = await sessionCookie(user, new URL(req.url).protocol === 'https:');
  return json({ user: publicUser(user) }, 200, { 'set-cookie': cookie });
});
