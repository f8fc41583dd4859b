import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { GatewayError } from '@/lib/errors';
import { writeAudit, SYSTEM_ACTOR, type Actor } from './audit';

export type Role = 'user' | 'admin';

export function parseRole(value: string): Role {
  if (value !== 'user' && value !== 'admin') throw new GatewayError('invalid_request', `Unknown role "${value}". Roles: user, admin.`, { param: 'role' });
  return value;
}

export async function setRole(actor: Actor, userId: string, role: Role) {
  const db = await getDb();
  return db.$transaction(async (tx) => {
    const before = await tx.user.findUnique({ where: { id: userId }, select: { role: true } });
    if (!before) throw new GatewayError('not_found', 'No such account.');
    const user = await tx.user.update({ where: { id: userId }, data: { role } });
    await writeAudit(actor, { action: 'account.set_role', targetType: 'account', targetId: userId, before, after: { role } }, tx);
    return user;
  });
}

/**
 * The account's role, promoting it first when its email is in ADMIN_EMAILS (the way a fresh install
 * gets its first operator; the promotion is audited once, and later demotions go through set-role
 * with the email taken out of ADMIN_EMAILS).
 */
export async function roleOf(userId: string): Promise<{ role: Role; email: string; status: string } | null> {
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId }, select: { role: true, email: true, status: true } });
  if (!user) return null;
  if (user.role !== 'admin' && env.ADMIN_EMAILS.includes(user.email)) {
    await db.$transaction(async (tx) => {
      const updated = await tx.user.updateMany({ where: { id: userId, role: 'user' }, data: { role: 'admin' } });
      if (updated.count) {
        await writeAudit(
          SYSTEM_ACTOR,
          { action: 'account.set_role', targetType: 'account', targetId: userId, before: { role: 'user' }, after: { role: 'admin' }, note: 'ADMIN_EMAILS' },
          tx,
        );
      }
    });
    return { role: 'admin', email: user.email, status: user.status };
  }
  return { role: user.role, email: user.email, status: user.status };
}
