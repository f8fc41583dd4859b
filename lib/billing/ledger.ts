import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { redisConfigured } from '@/lib/redis-client';
import { Prisma } from '@/lib/generated/prisma/client';
import { decimalToPico, formatPico } from '@/lib/money';
import { getLimiter } from '@/lib/limits/runtime';
import { balanceKey } from '@/lib/limits/keys';
import { log } from '@/lib/log';
import { periodicRunning, startPeriodic } from '@/lib/periodic';

const RECONCILER = 'credit reconciler';

export type CreditKind = 'recharge' | 'admin_credit' | 'refund';

export const picoToDecimal = (pico: bigint) => new Prisma.Decimal(formatPico(pico));
export { decimalToPico };

export interface CreditResult {
  /** The database balance after the credit, pico-USD. */
  balance: bigint;
  entryId: bigint;
  /**
   * Applied to the live balance the gateway admits against. False: it is recorded and pending (the
   * shared live balance was unreachable from this process, or this process has none of its own):
   * every running server applies pending credits within CREDIT_RECONCILE_MS of reaching Redis.
   */
  live: boolean;
}

/**
 * Adds money to an account: one append-only ledger entry and the cached balance, in one transaction.
 *
 * The live balance (Redis, or the server's in-process limiter) is fed from the ledger as from an
 * outbox: the entry is written pending (`livePending`), applied to the live balance idempotently
 * (Limiter.applyCredit: a marker per entry) and then marked applied. This process applies it at once
 * after the commit when it can; what it cannot (Redis unreachable, a crash in between, a credit made
 * inside a caller's transaction) every running server applies (startCreditReconciler). So a credit
 * reaches the live balance exactly once, within seconds of Redis being reachable.
 */
export async function creditBalance(
  userId: string,
  kind: CreditKind,
  amount: bigint,
  opts: { reference?: string; note?: string; tx?: Prisma.TransactionClient } = {},
): Promise<CreditResult> {
  const apply = async (tx: Prisma.TransactionClient) => {
    const user = await tx.user.update({ where: { id: userId }, data: { balanceUsd: { increment: picoToDecimal(amount) } } });
    const entry = await tx.ledgerEntry.create({
      data: { userId, kind, amountUsd: picoToDecimal(amount), balanceAfterUsd: user.balanceUsd, reference: opts.reference, note: opts.note, livePending: true },
      select: { id: true },
    });
    return { balance: decimalToPico(user.balanceUsd), entryId: entry.id };
  };
  // Inside a caller's transaction the entry is not visible yet: the caller applies it after its
  // commit (applyPendingCredits), or the reconcilers do.
  if (opts.tx) return { ...(await apply(opts.tx)), live: false };
  const done = await (await getDb()).$transaction(apply);
  const { pending } = await applyPendingCredits({ userId });
  return { ...done, live: pending === 0 && liveBalanceHere() };
}

/**
 * Whether this process can apply a credit to the live balance the gateway admits against: with
 * Redis, every process can (the balance is there); without it, only the server (its in-process
 * limiter holds the balance, and it runs the reconciler). A CLI without Redis leaves its credits to
 * the server.
 */
function liveBalanceHere(): boolean {
  return redisConfigured() || periodicRunning(RECONCILER);
}

/**
 * Applies pending credits (all, or one account's; oldest first, at most `limit`) to the live
 * balance and marks them applied; those the live balance cannot take now (Redis unreachable) stay
 * pending. Returns how many were applied and how many of those looked at are still pending.
 */
export async function applyPendingCredits(opts: { userId?: string; limit?: number } = {}): Promise<{ applied: number; pending: number }> {
  const db = await getDb();
  const rows = await db.ledgerEntry.findMany({
    where: opts.userId ? { livePending: true, userId: opts.userId } : { livePending: true },
    orderBy: { id: 'asc' },
    take: opts.limit ?? 200,
    select: { id: true, userId: true, amountUsd: true },
  });
  if (rows.length === 0 || !liveBalanceHere()) return { applied: 0, pending: rows.length };
  const limiter = getLimiter();
  const applied: bigint[] = [];
  for (const row of rows) {
    const ok = await limiter.applyCredit(row.id.toString(), balanceKey(row.userId), decimalToPico(row.amountUsd)).catch(() => false);
    // Not taken (Redis unreachable, or this entry failing): the next ones are still tried; a
    // failing entry must not hold up every later credit.
    if (!ok) continue;
    applied.push(row.id);
  }
  // If this fails (or the process dies first), the entries are applied again later: a no-op (markers).
  if (applied.length) await db.ledgerEntry.updateMany({ where: { id: { in: applied } }, data: { livePending: false } });
  return { applied: applied.length, pending: rows.length - applied.length };
}

/**
 * Every CREDIT_RECONCILE_MS, applies the credits still pending (made while Redis was unreachable
 * from their process, by a process that died before applying them, or by a CLI without Redis).
 * One indexed query on the partial index of pending entries, normally empty. Started once per
 * server process; the timer never keeps the process alive.
 */
export function startCreditReconciler(): void {
  startPeriodic(
    RECONCILER,
    env.CREDIT_RECONCILE_MS,
    async () => {
      const { applied } = await applyPendingCredits();
      if (applied) log('info', 'pending credits applied to the live balance', { applied });
    },
    { runNow: true },
  );
}
