import { env } from '@/lib/env';
import { startPeriodic } from '@/lib/periodic';
import { evaluateAlerts } from '@/lib/alerts/evaluate';
import { deliverDueAlerts } from '@/lib/alerts/deliver';

// The alerts loop of one server process: every ALERT_EVAL_MS, record new threshold crossings, then
// deliver the webhooks that are due. Every instance runs it; the events' ids and the delivery
// claim keep that to one event and one delivery at a time per crossing.

export async function runAlertsOnce(): Promise<void> {
  await evaluateAlerts();
  await deliverDueAlerts();
}

/** Started once per server process; the timer never keeps the process alive. */
export function startAlerts(): void {
  startPeriodic('alerts loop', env.ALERT_EVAL_MS, runAlertsOnce);
}
