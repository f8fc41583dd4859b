import NextAuth from 'next-auth';
import { authOptionsFor } from '@/lib/auth/options';
import { authBaseUrl, rebaseAuthResponse } from '@/lib/auth/origin-rebase';

type RouteContext = { params: Promise<{ nextauth: string[] }> };

// next-auth answers with URLs on NEXTAUTH_URL; without it they are moved onto the request's origin,
// and the SSO providers' callback URL is the request's own (authOptionsFor).
const onRequestOrigin = async (req: Request, ctx: RouteContext) => {
  const handler = NextAuth(authOptionsFor(authBaseUrl(req))) as (req: Request, ctx: RouteContext) => Promise<Response>;
  return rebaseAuthResponse(req, await handler(req, ctx));
};

export { onRequestOrigin as GET, onRequestOrigin as POST };
