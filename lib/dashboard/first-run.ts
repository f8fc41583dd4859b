import { getDb } from '@/lib/db';

export interface FirstRunState {
  hasKey: boolean;
  hasCredit: boolean;
  hasCall: boolean;
}

/** The three steps from sign-up to a first successful call, each read from what the account has done. */
export async function firstRunState(userId: string, balanceUsd: bigint): Promise<FirstRunState> {
  const db = await getDb();
  const [key, credit, call] = await Promise.all([
    db.apiKey.findFirst({ where: { userId }, select: { id: true } }),
    balanceUsd > 0n
      ? Promise.resolve({ id: 0n })
      : db.ledgerEntry.findFirst({ where: { userId, kind: { not: 'usage' }, amountUsd: { gt: 0 } }, select: { id: true } }),
    // Newest first on the (userId, createdAt) index: an active account finds one in its latest rows.
    db.requestLog.findFirst({ where: { userId, outcome: 'ok' }, orderBy: { createdAt: 'desc' }, select: { id: true } }),
  ]);
  // The log keeps REQUEST_LOG_RETENTION_DAYS at most; the daily rollups remember older calls.
  const earlier = call ?? (await db.usageDaily.findFirst({ where: { userId, requests: { gt: db.usageDaily.fields.failed } }, select: { userId: true } }));
  return { hasKey: key !== null, hasCredit: credit !== null, hasCall: earlier !== null };
}
