import { getDb, isUuid } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import type { TierName } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { listKeys, revokeKey, setLimits, setStatus, setTier } from '@/lib/accounts/queries';
import { creditBalance, decimalToPico } from '@/lib/billing/ledger';
import { formatPico } from '@/lib/money';
import { formatMoney } from '@/lib/format';
import { publishGatewayEvent } from '@/lib/events';
import { logSummarySelect } from '@/lib/dashboard/queries';
import { writeAudit, type Actor } from '@/lib/audit';

// Operator actions on accounts. The console and the admin CLI both call these, so an action has the
// same effect from either (the account library underneath publishes the cache invalidations and
// deny markers every instance honours; credits go through the ledger's live-balance outbox), and
// every one of them is written to the audit log.

const summarySelect = {
  id: true,
  email: true,
  tier: true,
  tierLocked: true,
  status: true,
  role: true,
  balanceUsd: true,
  limits: true,
  region: true,
  createdAt: true,
} as const;
type SummaryRow = Prisma.UserGetPayload<{ select: typeof summarySelect }>;

export interface AccountSummary {
  id: string;
  email: string;
  tier: TierName;
  tierLocked: boolean;
  status: 'active' | 'suspended';
  role: 'user' | 'admin';
  balancePico: bigint;
  limits: Prisma.JsonValue | null;
  /** Region pin (lib/region.ts); null = served anywhere. */
  region: string | null;
  createdAt: Date;
}

const summary = (u: SummaryRow): AccountSummary => ({ ...u, balancePico: decimalToPico(u.balanceUsd) });

/** `text` matched literally by Prisma's `contains` (a LIKE pattern; PostgreSQL's escape character is the backslash). */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Accounts whose email contains `query` (case-insensitive, literally: `%` and `_` are characters, not
 * wildcards) or whose id is `query`; newest first. Control characters are dropped (PostgreSQL
 * refuses a NUL in text).
 */
export async function searchAccounts(query: string, limit = 50): Promise<AccountSummary[]> {
  const db = await getDb();
  const q = query
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 200);
  const where: Prisma.UserWhereInput = !q
    ? {}
    : isUuid(q)
      ? { id: q.toLowerCase() }
      : { email: { contains: likeLiteral(q.toLowerCase()), mode: 'insensitive' } };
  const rows = await db.user.findMany({ where, select: summarySelect, orderBy: { createdAt: 'desc' }, take: Math.min(limit, 200) });
  return rows.map(summary);
}

export async function accountSummary(userId: string): Promise<AccountSummary> {
  if (!isUuid(userId)) throw codedError('not_found', 'admin.no_account');
  const db = await getDb();
  const row = await db.user.findUnique({ where: { id: userId }, select: summarySelect });
  if (!row) throw codedError('not_found', 'admin.no_account');
  return summary(row);
}

/** The account page: the account, its keys, its latest requests and ledger entries. */
export async function accountDetail(userId: string) {
  const account = await accountSummary(userId);
  const db = await getDb();
  const [keys, requests, ledger] = await Promise.all([
    listKeys(userId),
    db.requestLog.findMany({
      where: { userId },
      orderBy: { createdAt: 'desc' },
      take: 20,
      select: logSummarySelect,
    }),
    db.ledgerEntry.findMany({ where: { userId }, orderBy: { id: 'desc' }, take: 20 }),
  ]);
  return {
    account,
    keys,
    requests: requests.map((r) => ({ ...r, costPico: decimalToPico(r.costUsd) })),
    ledger: ledger.map((e) => ({
      id: e.id,
      kind: e.kind,
      amountPico: decimalToPico(e.amountUsd),
      balanceAfterPico: decimalToPico(e.balanceAfterUsd),
      note: e.note,
      reference: e.reference,
      createdAt: e.createdAt,
    })),
  };
}

/** Sets the tier; `pinned` (the CLI's behaviour) stops automatic promotion from moving it. */
export async function adminSetTier(actor: Actor, userId: string, tier: TierName, pinned = true): Promise<AccountSummary> {
  const before = await accountSummary(userId);
  await setTier(userId, tier);
  if (!pinned) {
    await (await getDb()).user.update({ where: { id: userId }, data: { tierLocked: false } });
    await publishGatewayEvent({ type: 'account-changed', userId });
  }
  const after = await accountSummary(userId);
  await writeAudit(actor, {
    action: 'account.set_tier',
    targetType: 'account',
    targetId: userId,
    before: { tier: before.tier, tierLocked: before.tierLocked },
    after: { tier: after.tier, tierLocked: after.tierLocked },
  });
  return after;
}

/** Pins the account to a region (its requests are served only by that region's channels), or clears it. */
export async function adminSetRegion(actor: Actor, userId: string, region: string | null): Promise<AccountSummary> {
  const before = await accountSummary(userId);
  await (await getDb()).user.update({ where: { id: userId }, data: { region } });
  await publishGatewayEvent({ type: 'account-changed', userId });
  await writeAudit(actor, {
    action: 'account.set_region',
    targetType: 'account',
    targetId: userId,
    before: { region: before.region },
    after: { region },
  });
  return accountSummary(userId);
}

export interface LimitsInput {
  rpm?: number;
  rph?: number;
  tokensPerDay?: number | null;
  concurrency?: number;
}

/** Custom limits (enterprise, VIP within its range); an empty object clears them. */
export async function adminSetLimits(actor: Actor, userId: string, limits: LimitsInput): Promise<AccountSummary> {
  const before = await accountSummary(userId);
  const clean = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  await setLimits(userId, clean);
  const after = await accountSummary(userId);
  await writeAudit(actor, {
    action: 'account.set_limits',
    targetType: 'account',
    targetId: userId,
    before: { limits: before.limits },
    after: { limits: after.limits },
  });
  return after;
}

export async function adminSetStatus(actor: Actor, userId: string, status: 'active' | 'suspended'): Promise<AccountSummary> {
  const before = await accountSummary(userId);
  await setStatus(userId, status);
  const after = await accountSummary(userId);
  await writeAudit(actor, {
    action: status === 'suspended' ? 'account.suspend' : 'account.unsuspend',
    targetType: 'account',
    targetId: userId,
    before: { status: before.status },
    after: { status: after.status },
  });
  return after;
}

/**
 * Credits (positive) or debits (negative) the balance through the ledger, exactly like the CLI's
 * `credit`: one ledger entry and the live balance on every instance (see creditBalance). A debit
 * may not take the balance below zero.
 */
export async function adminAdjustBalance(actor: Actor, userId: string, amountPico: bigint, note: string) {
  if (amountPico === 0n) throw codedError('invalid_request', 'admin.amount_zero', undefined, { param: 'amount_usd' });
  const trimmed = note.trim();
  if (trimmed.length > 500) throw codedError('invalid_request', 'admin.note_long', undefined, { param: 'note' });
  const before = await accountSummary(userId);
  if (amountPico < 0n && before.balancePico + amountPico < 0n) {
    throw codedError(
      'invalid_request',
      'admin.debit_exceeds',
      { amount: formatMoney(-amountPico), balance: formatMoney(before.balancePico) },
      { param: 'amount_usd' },
    );
  }
  const credit = await creditBalance(userId, 'admin_credit', amountPico, { note: trimmed || (amountPico > 0n ? 'admin credit' : 'admin debit') });
  await writeAudit(actor, {
    action: amountPico > 0n ? 'account.credit' : 'account.debit',
    targetType: 'account',
    targetId: userId,
    before: { balanceUsd: formatPico(before.balancePico) },
    after: { balanceUsd: formatPico(credit.balance), amountUsd: formatPico(amountPico), ledgerEntryId: credit.entryId, live: credit.live },
    note: trimmed || null,
  });
  return credit;
}

export async function adminRevokeKey(actor: Actor, userId: string, keyId: string) {
  const db = await getDb();
  const before = isUuid(keyId) && isUuid(userId) ? await db.apiKey.findFirst({ where: { id: keyId, userId }, select: { revokedAt: true } }) : null;
  const key = await revokeKey(userId, keyId);
  await writeAudit(actor, {
    action: 'key.revoke',
    targetType: 'key',
    targetId: key.id,
    before: { revoked: before?.revokedAt != null },
    after: { revoked: true, userId, display: key.display },
  });
  return key;
}
