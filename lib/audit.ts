import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';

/** Who did something: an operator (id + email), the CLI, or the gateway itself (automatic actions). */
export interface Actor {
  id: string | null;
  label: string;
}

export const CLI_ACTOR: Actor = { id: null, label: 'cli' };
export const SYSTEM_ACTOR: Actor = { id: null, label: 'system' };

export interface AuditEntry {
  action: string;
  targetType: 'account' | 'key' | 'channel' | 'redemption' | 'announcement' | 'log_export' | 'organization' | 'plan';
  targetId?: string | null;
  before?: unknown;
  after?: unknown;
  note?: string | null;
}

/** JSON-safe copy: bigint and Decimal become exact strings, Dates ISO text. */
function jsonValue(value: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  if (value === undefined || value === null) return Prisma.JsonNull;
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Prisma.Decimal ? v.toFixed(12) : v)),
  ) as Prisma.InputJsonValue;
}

/**
 * Appends one audit row. Pass the transaction of the change it records when there is one, so the
 * change and its record commit together. The table refuses UPDATE and DELETE (trigger).
 */
export async function writeAudit(actor: Actor, entry: AuditEntry, tx?: Prisma.TransactionClient): Promise<void> {
  const db = tx ?? (await getDb());
  await db.auditLog.create({
    data: {
      actorId: actor.id,
      actor: actor.label,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId ?? null,
      before: jsonValue(entry.before),
      after: jsonValue(entry.after),
      note: entry.note ?? null,
    },
  });
}

export async function listAudit(opts: { targetType?: string; targetId?: string; limit?: number } = {}) {
  const db = await getDb();
  return db.auditLog.findMany({
    where: { targetType: opts.targetType, targetId: opts.targetId },
    orderBy: { id: 'desc' },
    take: Math.min(opts.limit ?? 50, 500),
  });
}
