// POST /api/auth/password-reset/confirm {token, password} - set a new password with a mailed link
// (single use); every session of the account ends. Sign in afterwards.
import { apiRoute, assertSameOrigin, enforceLimit, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { auth } from '@/lib/schemas/auth';
import { resetPassword } from '@/lib/auth/password-reset';

export const POST = apiRoute(async (req, ctx) => {
  assertSameOrigin(req, { required: false });
  // Each try hashes a password: bounded like sign-ins.
  await enforceLimit(`gw:ip:password-reset-confirm:${ctx.ip}`, 10, 'password reset: 10 per IP per minute');
  const body = await readBody(req, auth.passwordResetConfirm);
  await resetPassword(body.token, body.password);
  return json({ ok: true });
});
