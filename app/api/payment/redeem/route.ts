// POST /api/payment/redeem - redeem a code for balance: {"code": "..."} -> the new balance
import { apiRoute, enforceLimit, json, requireActor } from '@/lib/http/api';
import { requireVerifiedEmail } from '@/lib/auth/email-verification';
import { readBody } from '@/lib/http/validate';
import { payment } from '@/lib/schemas/payment';
import { redeemCode } from '@/lib/admin/redemption';
import { formatPico } from '@/lib/money';

const REDEEM_PER_ACCOUNT = 10;
const REDEEM_PER_IP = 20;

export const POST = apiRoute(async (req, ctx) => {
  const { accountId: userId, personId } = await requireActor(req);
  // With verification on, the person paying must have proven their mailbox (docs/decisions/050).
  await requireVerifiedEmail(personId);
  // Tries count, found or not: 100-bit codes cannot be guessed, and this keeps it that way.
  await enforceLimit(`gw:user:redeem:${userId}`, REDEEM_PER_ACCOUNT, `redeem: ${REDEEM_PER_ACCOUNT} per account per minute`);
  await enforceLimit(`gw:ip:redeem:${ctx.ip}`, REDEEM_PER_IP, `redeem: ${REDEEM_PER_IP} per IP per minute`);
  const { code } = await readBody(req, payment.redeem);
  const result = await redeemCode(userId, code);
  return json({
    credited_usd: formatPico(result.creditedPico),
    balance_usd: formatPico(result.balancePico),
    plan: result.plan ? { id: result.plan.id, until: result.plan.until.toISOString() } : null,
  });
});
