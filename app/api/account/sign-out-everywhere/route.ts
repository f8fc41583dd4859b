// POST /api/account/sign-out-everywhere - end every session of the account, this one included
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { signOutEverywhere } from '@/lib/accounts/settings';
import { clearedSessionCookie } from '@/lib/auth/session-cookie';

export const POST = apiRoute(async (req) => {
  await signOutEverywhere(await requireUserId(req));
  return json({ ok: true }, 200, { 'set-cookie': clearedSessionCookie() });
});
