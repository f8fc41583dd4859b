import { getDb } from '@/lib/db';
import { GatewayError } from '@/lib/errors';
import { formatMoneyText } from '@/lib/format';
import type { Prisma } from '@/lib/generated/prisma/client';

// The account's alert events as the API and the dashboard show them.

export type AlertKind = 'key.budget.threshold' | 'account.balance.low';

/** The webhook body of an event (also what the API shows): Standard Webhooks' `type`, `timestamp`, `data`. */
export interface AlertPayload {
  id: string;
  type: AlertKind;
  timestamp: string;
  data: Record<string, string | number | null | Record<string, string>>;
}

interface EventRow {
  id: string;
  kind: string;
  payload: Prisma.JsonValue;
  createdAt: Date;
  deliveredAt: Date | null;
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  dismissedAt: Date | null;
}

function deliveryStatus(r: EventRow): 'delivered' | 'pending' | 'failed' | 'not_sent' {
  if (r.deliveredAt) return 'delivered';
  if (r.nextAttemptAt) return 'pending';
  return r.attempts > 0 ? 'failed' : 'not_sent';
}

export function publicEvent(r: EventRow) {
  const payload = r.payload as unknown as AlertPayload;
  return {
    id: r.id,
    type: r.kind,
    created_at: r.createdAt.toISOString(),
    data: payload.data,
    message: alertMessage(payload),
    dismissed_at: r.dismissedAt?.toISOString() ?? null,
    delivery: {
      status: deliveryStatus(r),
      attempts: r.attempts,
      delivered_at: r.deliveredAt?.toISOString() ?? null,
      next_attempt_at: r.nextAttemptAt?.toISOString() ?? null,
      last_error: r.lastError,
    },
  };
}

export type PublicAlertEvent = ReturnType<typeof publicEvent>;

/** One line a person reads (banner, event list). */
export function alertMessage(p: AlertPayload): string {
  const d = p.data;
  if (p.type === 'account.balance.low')
    return `Balance ${formatMoneyText(String(d.balance_usd))} is below your alert threshold of ${formatMoneyText(String(d.threshold_usd))}.`;
  const key = d.key as Record<string, string> | undefined;
  const budget = d.budget === 'monthly' ? `monthly budget (${d.period})` : 'lifetime budget';
  return `API key "${key?.name ?? '?'}" has used ${d.threshold_percent}% of its ${budget}: ${formatMoneyText(String(d.spent_usd))} of ${formatMoneyText(String(d.budget_usd))}.`;
}

export async function listAlertEvents(userId: string, opts: { undismissedOnly?: boolean; limit?: number } = {}) {
  const db = await getDb();
  const rows = await db.alertEvent.findMany({
    where: { userId, ...(opts.undismissedOnly ? { dismissedAt: null } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    take: Math.min(opts.limit ?? 50, 200),
  });
  return rows.map(publicEvent);
}

export async function dismissAlertEvent(userId: string, id: string) {
  const db = await getDb();
  const row = await db.alertEvent.findFirst({ where: { id, userId } });
  if (!row) throw new GatewayError('not_found', 'No such alert.');
  const updated = row.dismissedAt ? row : await db.alertEvent.update({ where: { id }, data: { dismissedAt: new Date() } });
  return publicEvent(updated);
}
