import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { formatPico, usdToPico } from '@/lib/billing/money';
import { getLimiter, balanceKey } from '@/lib/gateway/runtime';

export type CreditKind = 'recharge' | 'admin_credit' | 'refund';

export const picoToDecimal = (pico: bigint) => new Prisma.Decimal(formatPico(pico));
export const decimalToPico = (d: { toFixed(n: number): string }) => usdToPico(d.toFixed(12));

/**
 * Adds money to an account: one append-only ledger entry and the cached balance, in one transaction.
 * The live balance the limiter reserves against is adjusted after the commit.
 */
export async function creditBalance(
  userId: string,
  kind: CreditKind,
  amount: bigint,
  opts: { reference?: string; note?: string; tx?: Prisma.TransactionClient } = {},
): Promise<bigint> {
  const apply = async (tx: Prisma.TransactionClient) => {
    const user = await tx.user.update({ where: { id: userId }, data: { balanceUsd: { increment: picoToDecimal(amount) } } });
    await tx.ledgerEntry.create({
      data: { userId, kind, amountUsd: picoToDecimal(amount), balanceAfterUsd: user.balanceUsd, reference: opts.reference, note: opts.note },
    });
    return decimalToPico(user.balanceUsd);
  };
  const balance = opts.tx ? await apply(opts.tx) : await (await getDb()).$transaction(apply);
  if (!opts.tx) await getLimiter().adjustBalance(balanceKey(userId), amount);
  return balance;
}
