import { getDb, isUuid } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { decimalToPico, formatPico, usdToCny, usdToPico } from '@/lib/billing/money';
import { NO_KEY, pendingGroupCharges, pendingKeyCharges } from '@/lib/billing/writer';
import { publishGatewayEvent } from '@/lib/events';
import { enforceLimit } from '@/lib/limits/enforce';
import { generateApiKey } from '@/lib/auth/keys';
import { publicKey } from '@/lib/accounts/queries';
import { responseCacheData, responseCacheJson } from '@/lib/cache/key-setting';
import { keyRegionData } from '@/lib/gateway/region';
import { projectIdOf } from '@/lib/projects/queries';
import { monthOf, nameProblem, parseKeyControls, publicControls, type KeyControls } from '@/lib/keys/controls';

// Database access for per-key controls and spend.

/**
 * Columns of an ApiKey row that hold its controls. Prisma's Decimal is read with toFixed(12), never
 * toString(): that writes small and large amounts with an exponent (1e-8), which no money parser takes.
 */
export interface KeyControlColumns {
  budgetUsd: { toFixed(dp: number): string } | null;
  monthlyBudgetUsd: { toFixed(dp: number): string } | null;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  allowedIps: string[] | null;
  expiresAt: Date | null;
}

export function keyControlsOf(row: KeyControlColumns): KeyControls {
  return {
    budgetPico: row.budgetUsd === null ? null : decimalToPico(row.budgetUsd),
    monthlyBudgetPico: row.monthlyBudgetUsd === null ? null : decimalToPico(row.monthlyBudgetUsd),
    models: row.models ?? [],
    rpm: row.rpm,
    tpm: row.tpm,
    concurrency: row.concurrency,
    allowedIps: row.allowedIps ?? [],
    expiresAt: row.expiresAt,
  };
}

/** The Prisma data of validated controls (only the fields given). */
export function controlsData(c: Partial<KeyControls>) {
  const data: Record<string, unknown> = {};
  if (c.budgetPico !== undefined) data.budgetUsd = c.budgetPico === null ? null : formatPico(c.budgetPico);
  if (c.monthlyBudgetPico !== undefined) data.monthlyBudgetUsd = c.monthlyBudgetPico === null ? null : formatPico(c.monthlyBudgetPico);
  if (c.models !== undefined) data.models = c.models;
  if (c.rpm !== undefined) data.rpm = c.rpm;
  if (c.tpm !== undefined) data.tpm = c.tpm;
  if (c.concurrency !== undefined) data.concurrency = c.concurrency;
  if (c.allowedIps !== undefined) data.allowedIps = c.allowedIps;
  if (c.expiresAt !== undefined) data.expiresAt = c.expiresAt;
  return data;
}

/** Validates a body's controls against the operator's catalogue (400 naming the field). */
export function parseControlsBody(body: Record<string, unknown>, name?: string): Partial<KeyControls> {
  const models = getConfig().models;
  const bad = name === undefined ? null : nameProblem(name);
  return parseKeyControls(body, (m) => models.has(m), Date.now(), bad ? [bad] : []);
}

/**
 * What a key has spent in the database, since `sinceMs` (a UTC day's start: the month's) when given,
 * plus its charges still queued on this instance. Read from the daily rollup the batch writer keeps
 * with the log (UsageDaily), so it is a few rows per day whatever the traffic, and it still counts
 * days the log's retention dropped. Read once per key per instance when its live budget counter is
 * not loaded, like an account's balance.
 */
export async function loadKeySpend(userId: string, keyId: string, sinceMs?: number): Promise<bigint> {
  if (sinceMs !== undefined && sinceMs % DAY_MS !== 0) throw new Error('key spend is read by whole UTC days');
  const db = await getDb();
  const since = new Date(sinceMs ?? 0).toISOString().slice(0, 10);
  const rows = await db.$queryRaw<{ spent: string | null }[]>`
    SELECT COALESCE(SUM("costUsd"), 0)::text AS spent FROM "UsageDaily"
    WHERE "userId" = ${userId}::uuid AND "apiKeyId" = ${keyId}::uuid AND "day" >= ${since}::date`;
  return usdToPico(rows[0]?.spent ?? '0') + pendingKeyCharges(keyId, sinceMs ?? 0);
}

/**
 * What the keys of one project, or of one organization member, spent since `sinceMs` (a UTC day's
 * start: the month's), from the daily rollup plus the charges still queued here: the loading of a
 * project's or member's live budget counter (docs/decisions/056).
 */
export async function loadGroupSpend(userId: string, group: { memberId: string } | { projectId: string }, sinceMs: number): Promise<bigint> {
  if (sinceMs % DAY_MS !== 0) throw new Error('group spend is read by whole UTC days');
  const db = await getDb();
  const since = new Date(sinceMs).toISOString().slice(0, 10);
  const rows =
    'memberId' in group
      ? // A key's maker never changes: the member's spend is their keys' (UsageDaily by key).
        await db.$queryRaw<{ spent: string | null }[]>`
          SELECT COALESCE(SUM(u."costUsd"), 0)::text AS spent FROM "UsageDaily" u JOIN "ApiKey" k ON k.id = u."apiKeyId"
          WHERE u."userId" = ${userId}::uuid AND k."userId" = ${userId}::uuid AND k."createdById" = ${group.memberId}::uuid AND u."day" >= ${since}::date`
      : await db.$queryRaw<{ spent: string | null }[]>`
          SELECT COALESCE(SUM("costUsd"), 0)::text AS spent FROM "UsageDailyProject"
          WHERE "userId" = ${userId}::uuid AND "projectId" = ${group.projectId}::uuid AND "day" >= ${since}::date`;
  return usdToPico(rows[0]?.spent ?? '0') + pendingGroupCharges(userId, group, sinceMs);
}

/** Spend per key of one account: in total and this calendar month (UTC), pico-USD, from the daily rollup. */
async function spendByKey(userId: string): Promise<Map<string, { total: bigint; month: bigint }>> {
  const db = await getDb();
  const month = new Date(monthOf(Date.now()).start).toISOString().slice(0, 10);
  const rows = await db.$queryRaw<{ key: string; total: string; month: string }[]>`
    SELECT "apiKeyId"::text AS key, SUM("costUsd")::text AS total,
           COALESCE(SUM("costUsd") FILTER (WHERE "day" >= ${month}::date), 0)::text AS month
    FROM "UsageDaily" WHERE "userId" = ${userId}::uuid AND "apiKeyId" <> ${NO_KEY}::uuid GROUP BY "apiKeyId"`;
  return new Map(rows.map((r) => [r.key, { total: usdToPico(r.total), month: usdToPico(r.month) }]));
}

const DAY_MS = 86_400_000;

type Row = KeyControlColumns & {
  responseCacheTtl?: number | null;
  region?: string | null;
  id: string;
  name: string;
  prefix: string;
  lastFour: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdById?: string | null;
  projectId?: string | null;
};

/** A key as the API shows it, with its controls and (when known) its spend in USD and CNY. */
export function publicKeyWithControls(row: Row, spend?: { total: bigint; month: bigint }) {
  const controls = keyControlsOf(row);
  const rate = getConfig().cnyRateNano;
  const s = spend ?? { total: 0n, month: 0n };
  return {
    ...publicKey(row),
    ...publicControls(controls),
    ...responseCacheJson(row),
    region: row.region ?? null,
    // The organization member who made it (docs/decisions/040); null before organizations.
    created_by: row.createdById ?? null,
    // Its project (docs/decisions/056); null: none.
    project_id: row.projectId ?? null,
    expired: controls.expiresAt !== null && controls.expiresAt.getTime() <= Date.now(),
    spend: {
      total_usd: formatPico(s.total),
      total_cny: formatPico(usdToCny(s.total, rate)),
      month_usd: formatPico(s.month),
      month_cny: formatPico(usdToCny(s.month, rate)),
      month: monthOf(Date.now()).label,
    },
  };
}

/** One of the account's keys as the API shows it (after a revocation, say). */
export async function getKeyWithSpend(userId: string, keyId: string) {
  const db = await getDb();
  const row = await db.apiKey.findFirst({ where: { id: keyId, userId } });
  if (!row) throw codedError('not_found', 'key.not_found');
  const spend = await spendByKey(userId);
  return publicKeyWithControls(row, spend.get(row.id));
}

/** The account's spend grouped by key (`GET /api/usage?group_by=key`): every key, spent or not. */
export async function usageByKey(userId: string) {
  const keys = await listKeysWithSpend(userId);
  return keys.map((k) => ({ key_id: k.id, name: k.name, display: k.display, revoked: k.revoked, ...k.spend }));
}

/** The account's keys; with `createdById`, only that member's (a developer sees their own). */
export async function listKeysWithSpend(userId: string, createdById?: string) {
  const db = await getDb();
  const [rows, spend] = await Promise.all([db.apiKey.findMany({ where: { userId, createdById }, orderBy: { createdAt: 'desc' } }), spendByKey(userId)]);
  return rows.map((row) => publicKeyWithControls(row, spend.get(row.id)));
}

/**
 * Edits a key's name and controls. Every cached copy of the key is dropped through pub/sub, and the
 * marker of its previous version makes any copy the message has not reached yet refuse itself in
 * the admission and reload: the edit holds on the next request on every instance.
 */
export async function updateKey(userId: string, keyId: string, body: Record<string, unknown>) {
  await throttleKeyChanges(userId);
  const db = await getDb();
  const uuid = isUuid(keyId) && isUuid(userId) ? keyId : null;
  const row = uuid ? await db.apiKey.findFirst({ where: { id: uuid, userId } }) : null;
  if (!row) throw codedError('not_found', 'key.not_found');
  if (row.revokedAt) throw codedError('conflict', 'key.revoked');
  const name = body.name === undefined ? undefined : typeof body.name === 'string' ? body.name.trim() : '';
  const data: Record<string, unknown> = { ...controlsData(parseControlsBody(body, name)), ...responseCacheData(body), ...keyRegionData(body) };
  if (name !== undefined) data.name = name;
  const projectId = await projectIdOf(userId, body);
  if (projectId !== undefined) data.projectId = projectId;
  // The version moves in the same statement as the edit: two concurrent edits get two versions.
  const updated = await db.apiKey.update({ where: { id: row.id }, data: { ...data, controlsVersion: { increment: 1 } } });
  await publishGatewayEvent({ type: 'key-changed', hash: row.hash, staleVersion: updated.controlsVersion - 1 });
  const spend = await spendByKey(userId);
  return publicKeyWithControls(updated, spend.get(updated.id));
}

/**
 * Key creations and edits of one account, per minute (429 with Retry-After): each write publishes to
 * every instance, and each budget edit makes the alert evaluator look again (#37 item 11).
 */
async function throttleKeyChanges(userId: string): Promise<void> {
  const limit = getConfig().limits.key_changes_per_account_per_minute;
  await enforceLimit(`gw:acct:keychg:${userId}`, limit, `${limit} key creations and edits per account per minute`);
}

/** Creates a key with its controls (validated before anything is written); the full key is answered once. */
export async function createKeyWithControls(userId: string, body: Record<string, unknown>, createdById?: string) {
  const name = (typeof body.name === 'string' ? body.name : 'default').trim();
  const data = { ...controlsData(parseControlsBody(body, name)), ...responseCacheData(body), ...keyRegionData(body) };
  const projectId = await projectIdOf(userId, body);
  await throttleKeyChanges(userId);
  const cap = getConfig().limits.keys_per_account;
  const db = await getDb();
  const generated = generateApiKey();
  const row = await db.$transaction(async (tx) => {
    // Serialises this account's creations, so concurrent ones cannot both see room for one more.
    await tx.$queryRaw`SELECT 1 FROM "User" WHERE id = ${userId}::uuid FOR UPDATE`;
    const live = await tx.apiKey.count({ where: { userId, revokedAt: null } });
    if (live >= cap) {
      throw codedError('conflict', 'key.too_many', { live, cap });
    }
    return tx.apiKey.create({
      data: { userId, name, hash: generated.hash, prefix: generated.prefix, lastFour: generated.lastFour, createdById, projectId, ...data },
    });
  });
  await publishGatewayEvent({ type: 'key-created', hash: row.hash });
  return { ...publicKeyWithControls(row), key: generated.key };
}
