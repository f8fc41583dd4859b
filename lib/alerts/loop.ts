import { env } from '@/lib/env';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { evaluateAlerts } from '@/lib/alerts/evaluate';
import { deliverDueAlerts } from '@/lib/alerts/deliver';

// The alerts loop of one server process: every ALERT_EVAL_MS, record new threshold crossings, then
// deliver the webhooks that are due. Every instance runs it; the events' ids and the delivery
// claim keep that to one event and one delivery at a time per crossing.

interface LoopState {
  running: boolean;
  busy: boolean;
  failing: boolean;
  timer?: NodeJS.Timeout;
}

const state = () => singleton<LoopState>('alerts-loop', () => ({ running: false, busy: false, failing: false }));

export async function runAlertsOnce(): Promise<void> {
  await evaluateAlerts();
  await deliverDueAlerts();
}

/** Started once per server process; the timer never keeps the process alive. */
export function startAlerts(): void {
  const s = state();
  if (s.running) return;
  s.running = true;
  const tick = async () => {
    if (s.busy) return;
    s.busy = true;
    try {
      await runAlertsOnce();
      if (s.failing) log('info', 'alerts loop recovered');
      s.failing = false;
    } catch (err) {
      if (!s.failing) log('warn', 'alerts loop failed; retrying', errorFields(err));
      s.failing = true;
    } finally {
      s.busy = false;
    }
  };
  s.timer = setInterval(() => void tick(), env.ALERT_EVAL_MS);
  s.timer.unref();
}
