// POST /api/auth/register - create an account (3 per IP per minute); with email verification on, the
// verification link is mailed (docs/decisions/050)
import { apiRoute, assertSameOrigin, enforceLimit, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { auth } from '@/lib/schemas/auth';
import { createUser, publicUser } from '@/lib/accounts/queries';
import { getConfig } from '@/lib/config';
import { sessionCookie } from '@/lib/auth/session-cookie';
import { currentLocale } from '@/lib/i18n/server';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { sendVerification } from '@/lib/auth/email-verification';
import { ssoRequiredDomain } from '@/lib/auth/sso';
import { codedError } from '@/lib/errors';

export const POST = apiRoute(async (req, ctx) => {
  assertSameOrigin(req, { required: false });
  const limit = getConfig().limits.register_per_ip_per_minute;
  await enforceLimit(`gw:ip:register:${ctx.ip}`, limit, `register: ${limit} per IP per minute`);
  const body = await readBody(req, auth.register);
  const email = body.email;
  // A password account at a domain that must use SSO could never sign in with it (docs/decisions/052).
  const ssoDomain = await ssoRequiredDomain(email);
  if (ssoDomain) throw codedError('forbidden', 'auth.sso_required', { domain: ssoDomain });
  const locale = await currentLocale();
  const user = await createUser({ email, password: body.password, emailVerified: false, locale });
  const verification = getConfig().requireEmailVerification;
  // A failed send is logged; the billing page offers "resend".
  const mailed = verification ? await sendVerification(user, publicOriginOf(req), locale) : false;
  return json({ user: { ...publicUser(user), email_verified: false }, ...(verification ? { verification_mailed: mailed } : {}) }, 201, {
    'set-cookie': await sessionCookie(user),
  });
});
