import { getDb } from '@/lib/db';
import { usdToPico } from '@/lib/money';
import { pendingCharges } from './writer';

export interface AccountBalanceSnapshot {
  amount: bigint;
  credits: string[];
  included: string[];
}

/**
 * An account's balance as the database has it (less this instance's queued charges), in one
 * snapshot with the credits it includes that the live balance may not have counted: `credits`,
 * still pending, and `included`, those plus the credits of the last day (a credit applied to the
 * live balance while this load is under way is added by the load unless it is in `included`; see
 * Limiter.initBalance). Credits are a few per account a day, so the lists stay short.
 */
export async function loadAccountBalance(userId: string): Promise<AccountBalanceSnapshot> {
  const db = await getDb();
  const rows = await db.$queryRaw<{ balance: string; credits: string[]; included: string[] }[]>`
    SELECT u."balanceUsd"::text AS balance,
           ARRAY(SELECT l.id::text FROM "LedgerEntry" l WHERE l."livePending" AND l."userId" = u.id) AS credits,
           ARRAY(SELECT l.id::text FROM "LedgerEntry" l WHERE l."userId" = u.id AND l.kind IN ('recharge', 'admin_credit', 'refund')
                   AND (l."livePending" OR l."createdAt" > now() - interval '1 day')) AS included
    FROM "User" u WHERE u.id = ${userId}::uuid`;
  const row = rows[0];
  return { amount: (row ? usdToPico(row.balance) : 0n) - pendingCharges(userId), credits: row?.credits ?? [], included: row?.included ?? [] };
}
