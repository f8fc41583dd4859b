// POST /api/playground/token - a short-lived credential for the dashboard playground, minted for the
// signed-in session (lib/auth/playground.ts). Same-origin only (requireUserId's CSRF guard on a
// POST); refused for a suspended account like any other change. The page keeps it in memory and
// never shows it; the gateway accepts it only with this session's cookie, from this site.
import { getServerSession } from 'next-auth';
import { authOptions } from '@/lib/auth/options';
import { GatewayError } from '@/lib/errors';
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { mintPlaygroundToken } from '@/lib/auth/playground';

export const POST = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const authTime = ((await getServerSession(authOptions)) as { authTime?: unknown } | null)?.authTime;
  if (typeof authTime !== 'number') throw new GatewayError('unauthenticated', 'Sign in first.');
  const { token, expiresAt } = mintPlaygroundToken(userId, authTime);
  return json({ token, expires_at: new Date(expiresAt).toISOString() }, 200, { 'cache-control': 'no-store' });
});
