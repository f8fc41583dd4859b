// GET /api/auth/verify-email?token=… - the mailed verification link: marks the address verified and
// sends the browser to the billing page, which says how it went (?email=verified|expired|invalid).
import { apiRoute, enforceLimit } from '@/lib/http/api';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { verifyEmailToken } from '@/lib/auth/email-verification';
import { readQuery } from '@/lib/http/validate';
import { auth } from '@/lib/schemas/auth';

export const GET = apiRoute(async (req, ctx) => {
  await enforceLimit(`gw:ip:verify-email:${ctx.ip}`, 30, 'email verification: 30 per IP per minute');
  const outcome = await verifyEmailToken(readQuery(req, auth.verifyEmail).token);
  return new Response(null, { status: 303, headers: { location: `${publicOriginOf(req)}/dashboard/billing?email=${outcome}`, 'cache-control': 'no-store' } });
});
