import { encode } from 'next-auth/jwt';
import { env } from '@/lib/env';
import { authSecret } from '@/lib/secrets';
import { AUTH_TIME_CLAIM } from '@/lib/auth/session-epoch';

export const SESSION_MAX_AGE_S = 7 * 24 * 3600;

/**
 * The session cookie's name and attributes: the one source for next-auth (authOptions) and for the
 * cookie POST /api/auth/login and /api/auth/register set. Left to itself next-auth picks
 * `__Secure-next-auth.session-token` when NEXTAUTH_URL is https (and, with AUTH_TRUST_HOST, from
 * X-Forwarded-Proto), while those routes picked by the request's scheme, which Next.js takes from
 * X-Forwarded-Proto: behind a TLS-terminating proxy one side wrote a cookie the other never read.
 * Now it is fixed per deployment: secure when the public URL (NEXTAUTH_URL, else PUBLIC_BASE_URL) is https.
 */
export function sessionCookieSettings() {
  const publicUrl = env.NEXTAUTH_URL ?? env.PUBLIC_BASE_URL ?? '';
  const secure = publicUrl.startsWith('https://');
  return {
    name: secure ? '__Secure-next-auth.session-token' : 'next-auth.session-token',
    options: { httpOnly: true, sameSite: 'lax' as const, path: '/', secure },
  };
}

/** A next-auth session cookie for programmatic login/registration (same token the browser flow makes). */
export async function sessionCookie(user: { id: string; email: string }): Promise<string> {
  const token = await encode({ token: { sub: user.id, email: user.email, [AUTH_TIME_CLAIM]: Date.now() }, secret: authSecret(), maxAge: SESSION_MAX_AGE_S });
  const { name, options } = sessionCookieSettings();
  return `${name}=${token}; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=${SESSION_MAX_AGE_S}${options.secure ? '; Secure' : ''}`;
}

/** A Set-Cookie that ends the session in this browser. */
export function clearedSessionCookie(): string {
  const { name, options } = sessionCookieSettings();
  return `${name}=; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=0${options.secure ? '; Secure' : ''}`;
}
