import { closeLogWriter, flushLogs, queuedLogCount, spoolQueuedLogs } from '@/lib/billing/writer';
import { formatPico } from '@/lib/money';
import { stopPartitionMaintenance } from '@/lib/db/partitions';
import { flushKeyUsage } from '@/lib/auth/principal';
import { shutdownTracing } from '@/lib/telemetry/tracing';
import { env } from '@/lib/env';
import { errorFields, log } from '@/lib/log';
import { singleton } from '@/lib/singleton';

// Process lifecycle shared by both server paths. `npm start` (server.ts) owns its shutdown: it closes
// its listener, drains and flushes. Under `next start` the route handlers have no listener of their
// own to close, so SIGTERM (with NEXT_MANUAL_SIG_HANDLE=1, as `npm run start:next` sets it) makes
// the gateway refuse new /v1 requests with 503, lets in-flight ones finish within the grace period,
// flushes the request logs (spooling what the database does not take) and exits.

export interface Lifecycle {
  /** True once shutdown began: new gateway requests are refused. */
  draining: boolean;
  /** Set by server.ts: the custom server handles signals itself. */
  customServer: boolean;
  /** Gateway pipelines of the route-handler path not finished yet. */
  webPending: number;
  /** True once the grace period is over and open connections are being cut. */
  cuttingOff: boolean;
}

export const lifecycle = (): Lifecycle => singleton('lifecycle', () => ({ draining: false, customServer: false, webPending: 0, cuttingOff: false }));

/** After a client disconnects, how long a reply is still read for its usage (billing). */
const ABORT_DRAIN_MS = 15_000;
/** The same once shutdown cuts connections: the process exits shortly, so the log row goes first. */
const CUT_OFF_DRAIN_MS = 300;

// Replies still read for their usage after the client left: each stops after ABORT_DRAIN_MS, or
// soon once shutdown cuts connections (the process exits shortly, so the log row must go first).
// Kept through singleton() (globalThis): under `next start` the route handlers and the shutdown
// handler (instrumentation) are separate bundles, each with its own copy of this module.
const drainSet = () => singleton('abort-drains', () => new Set<{ stop: () => void; timer: NodeJS.Timeout }>());

/**
 * Keeps reading a reply whose client left, for its usage, then calls `stop` (which ends the read;
 * the usage is estimated from what arrived). Answers a function that cancels it (the reply ended).
 */
export function startAbortDrain(stop: () => void): () => void {
  const drain = { stop, timer: setTimeout(() => end(), lifecycle().cuttingOff ? CUT_OFF_DRAIN_MS : ABORT_DRAIN_MS) };
  const drains = drainSet();
  const end = () => {
    clearTimeout(drain.timer);
    if (drains.delete(drain)) stop();
  };
  drains.add(drain);
  return () => {
    clearTimeout(drain.timer);
    drains.delete(drain);
  };
}

// Streams still being relayed to a connected client, each with how to stop reading its upstream.
const streamSet = () => singleton('open-streams', () => new Set<() => void>());

/**
 * Registers a stream being relayed; `stop` ends its upstream read (the relay then ends the stream
 * with an error event, bills what was generated and logs it). Answers the function that
 * unregisters it (the stream ended).
 */
export function trackStream(stop: () => void): () => void {
  const streams = streamSet();
  streams.add(stop);
  return () => streams.delete(stop);
}

/**
 * Ends every stream still being relayed (the route-handler path's cut-off: it cannot close the
 * connections, which `npm start` does instead).
 */
export function cutOpenStreams(): void {
  const streams = streamSet();
  for (const stop of streams) stop();
  streams.clear();
}

/** Shutdown's grace period is over: open connections are about to be cut, drains are shortened. */
export function beginCutOff(): void {
  lifecycle().cuttingOff = true;
  const drains = drainSet();
  for (const d of drains) {
    clearTimeout(d.timer);
    d.timer = setTimeout(() => {
      if (drains.delete(d)) d.stop();
    }, CUT_OFF_DRAIN_MS);
  }
}

/** How long the final flush may take: the database may be down or unreachable (a connect that never answers). */
const FINAL_FLUSH_MS = 5_000;
/** The same for the last small writes (key usage times) and closing connections. */
const FINAL_STEP_MS = 1_000;

/** Exit codes of a shutdown: every row written; rows spooled (written at the next start); rows lost. */
export const EXIT_FLUSHED = 0;
export const EXIT_SPOOLED = 75; // EX_TEMPFAIL: the work is kept and done later
export const EXIT_LOST = 1;

/** Waits for `work` at most `ms` (it may go on; the process exits soon after). */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/**
 * The final writes every shutdown ends with, bounded in time. Request-log rows (and their charges)
 * the database does not take within FINAL_FLUSH_MS are spooled to DATA_DIR and written at the next
 * start (lib/billing/writer.ts); answers the process's exit code, said loudly in the log unless 0.
 */
export async function flushForShutdown(): Promise<number> {
  stopPartitionMaintenance();
  const deadline = Date.now() + FINAL_FLUSH_MS;
  await within(FINAL_FLUSH_MS, flushLogs());
  await within(FINAL_STEP_MS, flushKeyUsage());
  await within(FINAL_STEP_MS, shutdownTracing()); // the spans still batched
  // A pipeline that settled only now (after the settling wait gave up on it) queued its row since.
  if (queuedLogCount() > 0 && Date.now() < deadline) await within(deadline - Date.now(), flushLogs());
  let code = EXIT_FLUSHED;
  if (queuedLogCount() > 0) {
    try {
      const spooled = spoolQueuedLogs()!;
      code = EXIT_SPOOLED;
      log('error', 'request log rows not written at shutdown (database unreachable or too slow): spooled, written at the next start with this DATA_DIR', {
        rows: spooled.rows,
        costUsd: formatPico(spooled.costPico),
        file: spooled.file,
      });
    } catch (err) {
      code = EXIT_LOST;
      log('error', 'request log rows not written at shutdown and not spooled: LOST (their charges are in the live balances only)', {
        rows: queuedLogCount(),
        ...errorFields(err),
      });
    }
  }
  await within(FINAL_STEP_MS, closeLogWriter());
  return code;
}

export interface ShutdownSteps {
  /** Work in flight, for the log lines. */
  inFlight(): number;
  /** Stops taking new work. */
  stopAccepting(): void;
  /** Work the grace period waits for. */
  busy(): boolean;
  /** Ends what is still open once the grace period is over (connections or streams). */
  cut(): void;
  /** Work still settling (billing, its log row) after the cut; given up to 3 s more. */
  settling(): boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The one shutdown routine of both server paths, run on SIGTERM or SIGINT: stop taking work, let
 * what is in flight finish within SHUTDOWN_GRACE_MS, cut what is left (streams longer than the
 * grace are ended, billed for what was generated and logged), flush the request logs (or spool
 * them), exit 0 (75 when rows were spooled, 1 when rows were lost).
 */
export function onShutdownSignals(steps: ShutdownSteps): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', 'shutting down', { signal, inFlight: steps.inFlight() });
    steps.stopAccepting();
    const deadline = Date.now() + env.SHUTDOWN_GRACE_MS;
    while (steps.busy() && Date.now() < deadline) await sleep(50);
    beginCutOff();
    steps.cut();
    const cutOff = Date.now() + 3000;
    while (steps.settling() && Date.now() < cutOff) await sleep(20);
    const code = await flushForShutdown();
    log('info', 'stopped', { unfinished: steps.inFlight(), exitCode: code });
    process.exit(code);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** `next start`: the route handlers have no listener to close; the gateway refuses new /v1 requests instead. */
export function installRouteHandlerShutdown(): void {
  const state = lifecycle();
  if (state.customServer || singleton('route-handler-shutdown', () => ({ installed: false })).installed) return;
  singleton('route-handler-shutdown', () => ({ installed: true })).installed = true;
  onShutdownSignals({
    inFlight: () => state.webPending,
    stopAccepting: () => {
      state.draining = true;
    },
    busy: () => state.webPending > 0,
    cut: cutOpenStreams,
    settling: () => state.webPending > 0,
  });
}
