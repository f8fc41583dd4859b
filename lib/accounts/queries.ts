import { getDb, isUuid } from '@/lib/db';
import { getConfig, tierNames, type TierName } from '@/lib/config';
import { codedError, GatewayError, ruleError } from '@/lib/errors';
import { hashPassword } from '@/lib/auth/password';
import { emailProblem, normaliseEmail, passwordProblem } from '@/lib/auth/password-rules';
import { generateApiKey } from '@/lib/auth/keys';
import { formatPico } from '@/lib/billing/money';
import { creditBalance } from '@/lib/billing/ledger';
import { publishGatewayEvent } from '@/lib/events';

export { normaliseEmail };

export function parseTier(value: string): TierName {
  if (!(tierNames as readonly string[]).includes(value)) {
    throw new GatewayError('invalid_request', `Unknown tier "${value}". Tiers: ${tierNames.join(', ')}.`, { param: 'tier' });
  }
  return value as TierName;
}

/**
 * A new account. `emailVerified` false for a sign-up (the mailbox is not proven yet,
 * docs/decisions/050); accounts the operator creates (console, CLI) are taken as verified.
 */
export async function createUser(input: { email: string; password: string; tier?: TierName; balancePico?: bigint; emailVerified?: boolean; locale?: string }) {
  const email = normaliseEmail(input.email);
  const badEmail = emailProblem(email);
  if (badEmail) throw ruleError(badEmail, 'email');
  const problem = passwordProblem(input.password);
  if (problem) throw ruleError(problem, 'password');
  const db = await getDb();
  const passwordHash = await hashPassword(input.password);
  const starting = input.balancePico ?? getConfig().startingBalance;
  try {
    const user = await db.user.create({
      data: {
        email,
        passwordHash,
        tier: input.tier ?? 'free',
        emailVerifiedAt: input.emailVerified === false ? null : new Date(),
        locale: input.locale ?? null,
      },
    });
    if (starting > 0n) await creditBalance(user.id, 'admin_credit', starting, { note: 'starting balance' });
    return user;
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') {
      throw codedError('conflict', 'auth.email_taken', undefined, { param: 'email' });
    }
    throw err;
  }
}

/** The account of an email in any of its spellings; null for no account, and for no address (a NUL would be a database error). */
export async function findUserByEmail(email: string) {
  if (emailProblem(email)) return null;
  const db = await getDb();
  return db.user.findUnique({ where: { email: normaliseEmail(email) } });
}

export async function getUser(userId: string) {
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId } });
  if (!user) throw new GatewayError('not_found', 'No such account.');
  return user;
}

export async function setTier(userId: string, tier: TierName) {
  const db = await getDb();
  // An operator's choice sticks: automatic promotion no longer moves this account.
  const user = await db.user.update({ where: { id: userId }, data: { tier, tierLocked: true } });
  await publishGatewayEvent({ type: 'account-changed', userId });
  return user;
}

export async function setLimits(userId: string, limits: { rpm?: number; rph?: number; tokensPerDay?: number | null; concurrency?: number }) {
  const db = await getDb();
  const user = await db.user.update({ where: { id: userId }, data: { limits } });
  await publishGatewayEvent({ type: 'account-changed', userId });
  return user;
}

export async function setStatus(userId: string, status: 'active' | 'suspended') {
  const db = await getDb();
  const user = await db.user.update({ where: { id: userId }, data: { status } });
  await publishGatewayEvent({ type: 'account-changed', userId, suspended: status === 'suspended' });
  return user;
}

export async function createKey(userId: string, name: string) {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 64) throw new GatewayError('invalid_request', 'Key name must be 1 to 64 characters.', { param: 'name' });
  const db = await getDb();
  const generated = generateApiKey();
  const row = await db.apiKey.create({
    data: { userId, name: trimmed, hash: generated.hash, prefix: generated.prefix, lastFour: generated.lastFour },
  });
  await publishGatewayEvent({ type: 'key-created', hash: row.hash });
  return { ...publicKey(row), key: generated.key };
}

type KeyRow = { id: string; name: string; prefix: string; lastFour: string; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null };

export function publicKey(row: KeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    last_four: row.lastFour,
    display: `${row.prefix}…${row.lastFour}`,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked: row.revokedAt !== null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

export async function listKeys(userId: string) {
  const db = await getDb();
  const rows = await db.apiKey.findMany({ where: { userId }, orderBy: { createdAt: 'desc' } });
  return rows.map(publicKey);
}

/** Revokes one of the caller's keys; another account's key id answers 404 like a missing one. */
export async function revokeKey(userId: string, keyId: string) {
  const db = await getDb();
  const uuid = isUuid(keyId) && isUuid(userId) ? keyId : null;
  const row = uuid ? await db.apiKey.findFirst({ where: { id: uuid, userId } }) : null;
  if (!row) throw new GatewayError('not_found', 'No such key.');
  const updated = row.revokedAt ? row : await db.apiKey.update({ where: { id: row.id }, data: { revokedAt: new Date() } });
  await publishGatewayEvent({ type: 'key-revoked', hash: row.hash });
  return publicKey(updated);
}

export function publicUser(user: { id: string; email: string; tier: string; status: string; balanceUsd: { toFixed(n: number): string }; createdAt: Date }) {
  return {
    id: user.id,
    email: user.email,
    tier: user.tier,
    status: user.status,
    balance_usd: user.balanceUsd.toFixed(12).replace(/\.?0+$/, '') || '0',
    created_at: user.createdAt.toISOString(),
  };
}

export { formatPico };
