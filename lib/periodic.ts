import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';

// The background loops of a server process (alerts, credit reconciliation, channel overrides): one
// per process, kept through singleton() so that the route-handler bundles of `next start` share it.

interface Loop {
  running: boolean;
  busy: boolean;
  failing: boolean;
  timer?: NodeJS.Timeout;
}

const loop = (name: string) => singleton<Loop>(`periodic:${name}`, () => ({ running: false, busy: false, failing: false }));

export interface PeriodicOptions {
  /** Run once at start instead of waiting for the first interval. */
  runNow?: boolean;
  /** Log every failed run, not only the first of a series (and no line when it recovers). */
  logEveryFailure?: boolean;
}

/**
 * Runs `work` every `everyMs` from now on in this process; later calls with the same name do
 * nothing. A run never overlaps the one before it, and the timer never keeps the process alive. A
 * failure is logged as `<name> failed; retrying` once, and `<name> recovered` when a run succeeds
 * again.
 */
export function startPeriodic(name: string, everyMs: number, work: () => Promise<void>, opts: PeriodicOptions = {}): void {
  const s = loop(name);
  if (s.running) return;
  s.running = true;
  const tick = async () => {
    if (s.busy) return;
    s.busy = true;
    try {
      await work();
      if (s.failing && !opts.logEveryFailure) log('info', `${name} recovered`);
      s.failing = false;
    } catch (err) {
      if (!s.failing || opts.logEveryFailure) log('warn', `${name} failed; retrying`, errorFields(err));
      s.failing = true;
    } finally {
      s.busy = false;
    }
  };
  s.timer = setInterval(() => void tick(), everyMs);
  s.timer.unref();
  if (opts.runNow) void tick();
}

/** Whether startPeriodic(name) has run in this process. */
export function periodicRunning(name: string): boolean {
  return loop(name).running;
}

/** Stops the loop `name` of this process (shutdown); a later startPeriodic starts it again. */
export function stopPeriodic(name: string): void {
  const s = loop(name);
  if (s.timer) clearInterval(s.timer);
  s.timer = undefined;
  s.running = false;
}
