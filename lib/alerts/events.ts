import { getDb } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { englishMessage, type MessageCode, type MessageParams } from '@/lib/i18n/codes';
import { formatMoneyText } from '@/lib/format';
import type { Prisma } from '@/lib/generated/prisma/client';

// The account's alert events as the API and the dashboard show them.

export type AlertKind = 'key.budget.threshold' | 'project.budget.threshold' | 'member.budget.threshold' | 'account.balance.low';

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
    ...alertText(payload),
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

/** One line a person reads (banner, event list): the English `message`, its code and parameters. */
export function alertText(p: AlertPayload): { message: string; message_code: MessageCode; params: MessageParams } {
  const d = p.data;
  let code: MessageCode;
  let params: MessageParams;
  if (p.type === 'account.balance.low') {
    code = 'alert.balance_low';
    params = { balance: formatMoneyText(String(d.balance_usd)), threshold: formatMoneyText(String(d.threshold_usd)) };
  } else if (p.type === 'project.budget.threshold' || p.type === 'member.budget.threshold') {
    const project = d.project as Record<string, string> | undefined;
    const member = d.member as Record<string, string> | undefined;
    code = p.type === 'project.budget.threshold' ? 'alert.project_budget_monthly' : 'alert.member_budget_monthly';
    params = {
      name: project?.name ?? member?.email ?? '?',
      percent: String(d.threshold_percent),
      period: String(d.period ?? ''),
      spent: formatMoneyText(String(d.spent_usd)),
      budget: formatMoneyText(String(d.budget_usd)),
    };
  } else {
    const key = d.key as Record<string, string> | undefined;
    code = d.budget === 'monthly' ? 'alert.key_budget_monthly' : 'alert.key_budget_lifetime';
    params = {
      key: key?.name ?? '?',
      percent: String(d.threshold_percent),
      period: String(d.period ?? ''),
      spent: formatMoneyText(String(d.spent_usd)),
      budget: formatMoneyText(String(d.budget_usd)),
    };
  }
  return { message: englishMessage(code, params), message_code: code, params };
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
  if (!row) throw codedError('not_found', 'alert.not_found');
  const updated = row.dismissedAt ? row : await db.alertEvent.update({ where: { id }, data: { dismissedAt: new Date() } });
  return publicEvent(updated);
}
