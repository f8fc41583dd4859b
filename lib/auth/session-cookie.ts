import { encode } from 'next-auth/jwt';
import { authSecret } from '@/lib/secrets';

const MAX_AGE_S = 7 * 24 * 3600;

/** A next-auth session cookie for programmatic login/registration (same token the browser flow makes). */
export async function sessionCookie(user: { id: string; email: string }, secure: boolean): Promise<string> {
  const token = await encode({ token: { sub: user.id, email: user.email }, secret: authSecret(), maxAge: MAX_AGE_S });
  const name = secure ? '__Secure-next-auth.session-token' : 'next-auth.session-token';
  return `${name}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${MAX_AGE_S}${secure ? '; Secure' : ''}`;
}
