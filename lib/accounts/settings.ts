import { randomBytes } from 'node:crypto';
import { getDb } from '@/lib/db';
import { codedError, ruleError } from '@/lib/errors';
import { hashPassword, verifyPassword } from '@/lib/auth/password';
import { passwordProblem } from '@/lib/auth/password-rules';
import { revokeKey, setStatus } from '@/lib/accounts/queries';

// Account self-service: password change, sign-out of every session, deletion. Sessions are JWTs
// (next-auth), so "every session" is an instant: a session signed in before the account's
// sessionsValidFrom is refused (lib/auth/session-epoch.ts).

async function requirePassword(userId: string, password: unknown): Promise<void> {
  if (typeof password !== 'string' || password.length === 0) {
    throw codedError('invalid_request', 'auth.current_password_missing', undefined, { param: 'current_password' });
  }
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId }, select: { passwordHash: true } });
  if (!(await verifyPassword(password, user?.passwordHash))) {
    throw codedError('invalid_request', 'auth.current_password_wrong', undefined, { param: 'current_password' });
  }
}

/** New password after the current one; every other session ends (the caller gets a fresh cookie). */
export async function changePassword(userId: string, currentPassword: unknown, newPassword: unknown): Promise<void> {
  if (typeof newPassword !== 'string') throw codedError('invalid_request', 'auth.new_password_missing', undefined, { param: 'new_password' });
  const problem = passwordProblem(newPassword);
  if (problem) throw ruleError(problem, 'new_password');
  await requirePassword(userId, currentPassword);
  const db = await getDb();
  await db.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(newPassword), sessionsValidFrom: new Date() } });
}

/**
 * The operator sets an account's password (CLI `set-password`: how a user without mail gets back in,
 * docs/decisions/050). The sign-up rules hold; every session and every open reset link ends.
 */
export async function setPasswordByOperator(userId: string, newPassword: string): Promise<void> {
  const problem = passwordProblem(newPassword);
  if (problem) throw ruleError(problem, 'password');
  const db = await getDb();
  const now = new Date();
  await db.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(newPassword), sessionsValidFrom: now } });
  await db.passwordReset.updateMany({ where: { userId, usedAt: null }, data: { usedAt: now } });
}

/** Ends every session of the account, this one included. */
export async function signOutEverywhere(userId: string): Promise<void> {
  const db = await getDb();
  await db.user.update({ where: { id: userId }, data: { sessionsValidFrom: new Date() } });
}

/**
 * Deletes the account as far as the ledger allows: keys revoked (refused at once on every
 * instance), email and password replaced, limits dropped, sessions ended, the account suspended.
 * The ledger and the request log stay, tied to an id that no longer names anyone, for accounting.
 */
export async function deleteAccount(userId: string, password: unknown): Promise<void> {
  await requirePassword(userId, password);
  const db = await getDb();
  const keys = await db.apiKey.findMany({ where: { userId, revokedAt: null }, select: { id: true } });
  for (const k of keys) await revokeKey(userId, k.id);
  const now = new Date();
  await db.user.update({
    where: { id: userId },
    data: {
      email: `deleted-${userId}@deleted.invalid`,
      passwordHash: await hashPassword(randomBytes(32).toString('base64url')),
      sessionsValidFrom: now,
      deletedAt: now,
    },
  });
  // Suspended like an operator would: refused on every instance at once (deny marker), balance kept.
  await setStatus(userId, 'suspended');
}
