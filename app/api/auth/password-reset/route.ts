// POST /api/auth/password-reset {email} - mail a reset link when an account has that address. The
// answer is the same either way (202); 503 `mail.not_configured` without SMTP; 429 past the budgets.
import { apiRoute, assertSameOrigin, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { auth } from '@/lib/schemas/auth';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { currentLocale } from '@/lib/i18n/server';
import { requestPasswordReset, RESET_TTL_MS } from '@/lib/auth/password-reset';

export const POST = apiRoute(async (req, ctx) => {
  assertSameOrigin(req, { required: false });
  const body = await readBody(req, auth.passwordReset);
  await requestPasswordReset(body.email, ctx.ip, publicOriginOf(req), await currentLocale());
  return json({ ok: true, expires_in_seconds: RESET_TTL_MS / 1000 }, 202);
});
