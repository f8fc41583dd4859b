import NextAuth from 'next-auth';
import { authOptionsFor } from '@/lib/auth/options';
import { NEXT_AUTH_DEFAULT_ORIGIN, rebaseAuthResponse } from '@/lib/auth/origin-rebase';
import { requestOrigin } from '@/lib/auth/request-origin';
import { env } from '@/lib/env';

type RouteContext = { params: Promise<{ nextauth: string[] }> };

/**
 * Where next-auth lives for this request: under NEXTAUTH_URL when set, else on the request's own
 * origin, so an SSO provider sends the browser back to the host it left from (lib/auth/sso-providers.ts).
 */
function authBase(req: Request): string {
  if (env.NEXTAUTH_URL) {
    // As next-auth reads it: a bare origin means /api/auth under it, else the path given.
    const url = new URL(env.NEXTAUTH_URL);
    const path = url.pathname === '/' ? '/api/auth' : url.pathname.replace(/\/+$/, '');
    return `${url.origin}${path}`;
  }
  return `${requestOrigin(req.headers) ?? NEXT_AUTH_DEFAULT_ORIGIN}/api/auth`;
}

// next-auth answers with URLs on NEXTAUTH_URL; without it they are moved onto the request's origin.
const onRequestOrigin = async (req: Request, ctx: RouteContext) => {
  const handler = NextAuth(authOptionsFor(authBase(req))) as (req: Request, ctx: RouteContext) => Promise<Response>;
  return rebaseAuthResponse(req, await handler(req, ctx));
};

export { onRequestOrigin as GET, onRequestOrigin as POST };
