import NextAuth from 'next-auth';
import { authOptions } from '@/lib/auth/options';
import { rebaseAuthResponse } from '@/lib/auth/origin-rebase';

type RouteContext = { params: Promise<{ nextauth: string[] }> };
const handler = NextAuth(authOptions) as (req: Request, ctx: RouteContext) => Promise<Response>;

// next-auth answers with URLs on NEXTAUTH_URL; without it they are moved onto the request's origin.
const onRequestOrigin = async (req: Request, ctx: RouteContext) => rebaseAuthResponse(req, await handler(req, ctx));

export { onRequestOrigin as GET, onRequestOrigin as POST };
