// POST /api/auth/password-reset {email} - mail a reset link when an account has that address. The
// answer is the same either way (202); 503 `mail.not_configured` without SMTP; 429 past the budgets.
import { apiRoute, assertSameOrigin, json, readJson, requireString } from '@/lib/http/api';
import { publicOriginOf } from '@/lib/http/orgs-origin';
import { currentLocale } from '@/lib/i18n/server';
import { requestPasswordReset, RESET_TTL_MS } from '@/lib/auth/password-reset';

export const POST = apiRoute(async (req, ctx) => {
  assertSameOrigin(req, { required: false });
  const body = await readJson(req);
  await requestPasswordReset(requireString(body, 'email'), ctx.ip, publicOriginOf(req), await currentLocale());
  return json({ ok: true, expires_in_seconds: RESET_TTL_MS / 1000 }, 202);
});
