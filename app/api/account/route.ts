// DELETE /api/account - delete the caller's account (password required): keys revoked, personal data removed, ledger kept
import { apiRoute, enforceLimit, json, requireUserId } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { account } from '@/lib/schemas/account';
import { deleteAccount } from '@/lib/accounts/settings';
import { clearedSessionCookie } from '@/lib/auth/session-cookie';

export const DELETE = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  await enforceLimit(`gw:user:password:${userId}`, 5, 'password checks: 5 per account per minute');
  const body = await readBody(req, account.delete);
  await deleteAccount(userId, body.password);
  return json({ ok: true }, 200, { 'set-cookie': clearedSessionCookie() });
});
