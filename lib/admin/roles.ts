import { getDb, isUuid } from '@/lib/db';
import { env } from '@/lib/env';
import { codedError } from '@/lib/errors';
import { normaliseEmail } from '@/lib/password-rules';
import { writeAudit, type Actor } from '@/lib/audit';

export type Role = 'user' | 'admin';

export function parseRole(value: string): Role {
  if (value !== 'user' && value !== 'admin') throw codedError('invalid_request', 'admin.role_unknown', { role: value }, { param: 'role' });
  return value;
}

export async function setRole(actor: Actor, userId: string, role: Role) {
  if (!isUuid(userId)) throw codedError('not_found', 'admin.no_account');
  const db = await getDb();
  return db.$transaction(async (tx) => {
    const before = await tx.user.findUnique({ where: { id: userId }, select: { role: true } });
    if (!before) throw codedError('not_found', 'admin.no_account');
    const user = await tx.user.update({ where: { id: userId }, data: { role } });
    await writeAudit(actor, { action: 'account.set_role', targetType: 'account', targetId: userId, before, after: { role } }, tx);
    return user;
  });
}

/**
 * The account's role as stored. ADMIN_EMAILS is not applied here: a sign-in or registration of a
 * listed address proves nothing about who owns it (there is no email verification), so it never
 * yields an operator. The CLI's create-user applies it (roleForNewAccount), and set-role promotes an
 * existing account.
 */
export async function roleOf(userId: string): Promise<{ role: Role; email: string; status: string } | null> {
  if (!isUuid(userId)) return null;
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId }, select: { role: true, email: true, status: true } });
  return user ? { role: user.role, email: user.email, status: user.status } : null;
}

/** The role an account the operator creates from the shell starts with: admin when ADMIN_EMAILS lists it. */
export function roleForNewAccount(email: string): Role {
  return env.ADMIN_EMAILS.includes(normaliseEmail(email)) ? 'admin' : 'user';
}
