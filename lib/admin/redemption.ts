import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { getDb, isUuid } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { applyPendingCredits, creditBalance, decimalToPico, picoToDecimal } from '@/lib/billing/ledger';
import { formatPico } from '@/lib/money';
import { writeAudit, type Actor } from '@/lib/audit';
import { announcePlanChange, grantPlan, MAX_PLAN_DAYS, planOrThrow } from '@/lib/plans/subscriptions';
import { MAX_BATCH } from '@/lib/schemas/admin/codes';

// Redemption codes: prepaid balance for markets without Stripe. A code is 20 random Crockford
// base32 characters (100 bits) shown once at creation; only its SHA-256 is stored.

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_CHARS = 20;
// The route schema's bound (lib/schemas/admin/codes.ts).
export { MAX_BATCH };
const MAX_CODE_USD = 10_000n * 1_000_000_000_000n;

function generateCode(): string {
  const bytes = randomBytes(CODE_CHARS);
  // 256 = 8 * 32: every character equally likely.
  const chars = [...bytes].map((b) => ALPHABET[b % 32]).join('');
  return `GW-${chars.match(/.{5}/g)!.join('-')}`;
}

/** Case, spaces and dashes do not matter; Crockford's look-alikes (O, I, L) read as 0, 1, 1. */
export function normaliseCode(code: string): string {
  const compact = code.toUpperCase().replace(/[\s-]/g, '');
  const body = compact.length === CODE_CHARS + 2 && compact.startsWith('GW') ? compact.slice(2) : compact;
  return body.replace(/O/g, '0').replace(/[IL]/g, '1');
}

export const hashCode = (code: string) => createHash('sha256').update(normaliseCode(code)).digest('hex');

function parseExpiry(value: string | Date | undefined | null): Date | null {
  if (value === undefined || value === null || value === '') return null;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime()) || (typeof value === 'string' && !/^\d{4}-\d{2}-\d{2}/.test(value))) {
    throw codedError('invalid_request', 'redeem.expiry_format', undefined, { param: 'expires_at' });
  }
  if (date.getTime() <= Date.now()) throw codedError('invalid_request', 'redeem.expiry_past', undefined, { param: 'expires_at' });
  return date;
}

export interface CreatedBatch {
  batchId: string;
  amountUsd: string;
  expiresAt: string | null;
  codes: { id: string; code: string }[];
  plan?: { id: string; days: number };
}

export async function createCodeBatch(
  actor: Actor,
  input: { amountPico: bigint; count: number; expiresAt?: string | Date | null; planId?: string; planDays?: number },
): Promise<CreatedBatch> {
  const withPlan = input.planId !== undefined || input.planDays !== undefined;
  if (withPlan) {
    // A plan code: the plan and its days both; an amount besides it is optional.
    if (input.planId === undefined) throw codedError('invalid_request', 'plan.unknown', { plan: '' }, { param: 'plan' });
    planOrThrow(input.planId, 'plan', { offered: true });
    if (input.planDays === undefined) throw codedError('invalid_request', 'plan.days', { max: MAX_PLAN_DAYS }, { param: 'plan_days' });
  }
  if ((withPlan ? input.amountPico < 0n : input.amountPico <= 0n) || input.amountPico > MAX_CODE_USD) {
    throw codedError('invalid_request', 'redeem.amount', undefined, { param: 'amount_usd' });
  }
  if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_BATCH) {
    throw codedError('invalid_request', 'redeem.count', { max: MAX_BATCH }, { param: 'count' });
  }
  const expiresAt = parseExpiry(input.expiresAt);
  const batchId = randomUUID();
  const codes = Array.from({ length: input.count }, () => ({ id: randomUUID(), code: generateCode() }));
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.redemptionCode.createMany({
      data: codes.map((c) => ({
        id: c.id,
        batchId,
        hash: hashCode(c.code),
        lastFour: c.code.slice(-4),
        amountUsd: picoToDecimal(input.amountPico),
        expiresAt,
        createdBy: actor.label,
        planId: input.planId ?? null,
        planDays: input.planDays ?? null,
      })),
    });
    await writeAudit(
      actor,
      {
        action: 'redemption.create_batch',
        targetType: 'redemption',
        targetId: batchId,
        after: { count: input.count, amountUsd: formatPico(input.amountPico), expiresAt, plan: input.planId, planDays: input.planDays },
      },
      tx,
    );
  });
  return {
    batchId,
    amountUsd: formatPico(input.amountPico),
    expiresAt: expiresAt?.toISOString() ?? null,
    codes,
    ...(input.planId ? { plan: { id: input.planId, days: input.planDays! } } : {}),
  };
}

/**
 * Redeems a code for an account: the code is claimed (a conditional update, so of concurrent
 * redemptions exactly one matches) and the balance credited through the ledger in the same
 * transaction; the credit then reaches the live balance like any other (creditBalance's outbox).
 */
export async function redeemCode(userId: string, code: string): Promise<{ creditedPico: bigint; balancePico: bigint; plan?: { id: string; until: Date } }> {
  const normalised = normaliseCode(code);
  // Ours are 20 characters; codes imported from new-api/one-api (`admin import`) are 32 hex digits.
  if (!/^[0-9A-Z]{20}$/.test(normalised) && !/^[0-9A-F]{32}$/.test(normalised)) throw codedError('not_found', 'redeem.invalid', undefined, { param: 'code' });
  const hash = hashCode(code);
  const db = await getDb();
  const result = await db.$transaction(async (tx) => {
    const row = await tx.redemptionCode.findUnique({ where: { hash } });
    if (!row) throw codedError('not_found', 'redeem.invalid', undefined, { param: 'code' });
    if (row.redeemedAt) throw codedError('conflict', 'redeem.used', undefined, { param: 'code' });
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) {
      throw codedError('invalid_request', 'redeem.expired', { date: row.expiresAt.toISOString().slice(0, 10) }, { param: 'code' });
    }
    const claimed = await tx.redemptionCode.updateMany({ where: { id: row.id, redeemedAt: null }, data: { redeemedAt: new Date(), redeemedBy: userId } });
    if (claimed.count !== 1) throw codedError('conflict', 'redeem.used', undefined, { param: 'code' });
    const amount = decimalToPico(row.amountUsd);
    // A plan code: the plan is granted (or extended) in the same transaction as the claim.
    const sub = row.planId && row.planDays ? await grantPlan(userId, row.planId, row.planDays, 'code', { tx }) : null;
    if (amount === 0n) {
      const user = await tx.user.findUniqueOrThrow({ where: { id: userId }, select: { balanceUsd: true } });
      return { creditedPico: 0n, balancePico: decimalToPico(user.balanceUsd), plan: sub ? { id: sub.planId, until: sub.currentPeriodEnd } : undefined };
    }
    const credit = await creditBalance(userId, 'recharge', amount, { reference: `redeem:${row.id}`, note: `redemption code …${row.lastFour}`, tx });
    await tx.redemptionCode.update({ where: { id: row.id }, data: { ledgerEntryId: credit.entryId } });
    return { creditedPico: amount, balancePico: credit.balance, plan: sub ? { id: sub.planId, until: sub.currentPeriodEnd } : undefined };
  });
  // Committed: put it in the live balance now (the reconcilers would within CREDIT_RECONCILE_MS).
  await applyPendingCredits({ userId }).catch(() => undefined);
  if (result.plan) await announcePlanChange(userId);
  return result;
}

export interface BatchSummary {
  batchId: string;
  amountPico: bigint;
  count: number;
  redeemed: number;
  expiresAt: Date | null;
  createdAt: Date;
  createdBy: string;
}

export async function listBatches(limit = 50): Promise<BatchSummary[]> {
  const db = await getDb();
  const rows = await db.$queryRaw<
    { batchId: string; amount: string; count: bigint; redeemed: bigint; expiresAt: Date | null; createdAt: Date; createdBy: string }[]
  >`
    SELECT "batchId"::text AS "batchId", MIN("amountUsd")::text AS amount, COUNT(*) AS count, COUNT("redeemedAt") AS redeemed,
           MIN("expiresAt") AS "expiresAt", MIN("createdAt") AS "createdAt", MIN("createdBy") AS "createdBy"
    FROM "RedemptionCode" GROUP BY "batchId" ORDER BY MIN("createdAt") DESC LIMIT ${limit}`;
  return rows.map((r) => ({
    batchId: r.batchId,
    amountPico: decimalToPico({ toFixed: () => r.amount }),
    count: Number(r.count),
    redeemed: Number(r.redeemed),
    expiresAt: r.expiresAt,
    createdAt: r.createdAt,
    createdBy: r.createdBy,
  }));
}

/** A batch's codes (last four characters only) with who redeemed each and when. */
export async function batchCodes(batchId: string) {
  if (!isUuid(batchId)) throw codedError('not_found', 'redeem.batch_not_found');
  const db = await getDb();
  const rows = await db.redemptionCode.findMany({ where: { batchId }, orderBy: { createdAt: 'asc' } });
  if (rows.length === 0) throw codedError('not_found', 'redeem.batch_not_found');
  const ids = [...new Set(rows.map((r) => r.redeemedBy).filter((v): v is string => v !== null))];
  const users = ids.length ? await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } }) : [];
  const emails = new Map(users.map((u) => [u.id, u.email]));
  return rows.map((r) => ({
    id: r.id,
    lastFour: r.lastFour,
    amountPico: decimalToPico(r.amountUsd),
    expiresAt: r.expiresAt,
    redeemedAt: r.redeemedAt,
    redeemedBy: r.redeemedBy,
    redeemedByEmail: r.redeemedBy ? (emails.get(r.redeemedBy) ?? null) : null,
  }));
}
