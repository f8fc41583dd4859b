// A paid Stripe recharge of one account, for its receipt.
import { getDb, isUuid } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { decimalToPico, usdToCny } from '@/lib/money';

export interface Receipt {
  paymentId: string;
  accountId: string;
  accountName: string;
  isOrganization: boolean;
  stripeSessionId: string;
  paidAt: Date;
  amountUsd: bigint;
  amountCny: bigint;
  cnyRate: string;
  /** The balance after the credit, from its ledger entry. */
  balanceAfterUsd: bigint | null;
}

/** The receipt of `paymentId` if it is a paid recharge of `accountId`; 404 (receipt.not_found) otherwise. */
export async function paidRecharge(accountId: string, paymentId: string): Promise<Receipt> {
  if (!isUuid(paymentId) || !isUuid(accountId)) throw codedError('not_found', 'receipt.not_found');
  const db = await getDb();
  const payment = await db.payment.findFirst({
    where: { id: paymentId, userId: accountId, status: 'paid' },
    include: { user: { select: { email: true, organization: { select: { name: true } } } } },
  });
  if (!payment) throw codedError('not_found', 'receipt.not_found');
  // The credit is the entry the webhook wrote with the payment as reference (what was actually paid).
  const entry = await db.ledgerEntry.findFirst({
    where: { userId: accountId, kind: 'recharge', reference: paymentId },
    select: { amountUsd: true, balanceAfterUsd: true, createdAt: true },
  });
  const config = getConfig();
  const amountUsd = decimalToPico(entry?.amountUsd ?? payment.amountUsd);
  return {
    paymentId,
    accountId,
    accountName: payment.user.organization?.name ?? payment.user.email,
    isOrganization: payment.user.organization !== null,
    stripeSessionId: payment.stripeSessionId,
    paidAt: payment.paidAt ?? entry?.createdAt ?? payment.createdAt,
    amountUsd,
    amountCny: usdToCny(amountUsd, config.cnyRateNano),
    cnyRate: config.usdToCny,
    balanceAfterUsd: entry ? decimalToPico(entry.balanceAfterUsd) : null,
  };
}
