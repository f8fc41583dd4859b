// The job engine: work that outlives a request (a video generation, a batch) runs here, on any
// instance. Jobs live in PostgreSQL (or the embedded PGlite): each instance claims due jobs
// (store.ts: FOR UPDATE SKIP LOCKED under the account and platform caps), beats for the ones it runs,
// and takes over those whose instance stopped beating (killed). A handler checkpoints its
// resumable state (an upstream job's id, the lines done), so a job taken over resumes instead of
// starting again; its settlement is keyed by the job's id (a charge written twice is written once).
// Failures are retried with back-off; a cancel is seen by the owner's next heartbeat; a finished
// job's completion webhook goes to the account's alert webhook, signed as alerts are.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { env } from '@/lib/env';
import { getConfig } from '@/lib/config';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { alertEventId } from '@/lib/alerts/signing';
import { postWebhook, retryDelayMs } from '@/lib/alerts/deliver';
import { backoffDelayMs } from '@/lib/backoff';
import { openSecret } from '@/lib/alerts/settings';
import {
  checkpoint,
  claimJob,
  claimWebhooks,
  finishJob,
  heartbeat,
  releaseOwned,
  requeue,
  webhookDone,
  type JobRow,
  type JobStatus,
} from '@/lib/gateway/jobs/store';

// `npm start` runs two copies of lib/ (the custom server's bundle and Next's): a job may be run by
// one copy's engine and throw the other copy's error classes, so they are told apart by a brand
// property, never by instanceof.
type JobErrorKind = 'retryable' | 'failure' | 'lost';
const kindOf = (err: unknown): JobErrorKind | undefined => (err as { jobError?: JobErrorKind } | null)?.jobError;

/** A failure worth another attempt (an upstream down, a timeout): retried with back-off up to the job's maxRetries. */
export class RetryableJobError extends Error {
  readonly jobError = 'retryable' as const;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A failure that ends the job (the upstream refused the request). */
export class JobFailure extends Error {
  readonly jobError = 'failure' as const;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a handler sees of the job it runs. */
export interface JobRun {
  readonly job: JobRow;
  /** Aborted when the job is cancelled, taken from this instance, or the process shuts down. */
  readonly signal: AbortSignal;
  /** Why `signal` fired. */
  stopReason(): 'cancelled' | 'lost' | 'shutdown' | null;
  /** Saves resumable state and progress (0-100); throws when the job is no longer this instance's. */
  checkpoint(patch: { state?: Record<string, unknown>; progress?: number }): Promise<void>;
}

export interface JobOutcome {
  status: 'succeeded' | 'failed' | 'cancelled';
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
  /** When the job's row and files go (retention). */
  expiresAt?: Date | null;
}

export interface JobHandler {
  kind: string;
  /** Prefix of the webhook events: `video` gives video.completed / video.failed / video.cancelled. */
  event: string;
  /**
   * Runs the job to its end and settles it (billing keyed by the job's id: idempotent). Returns how
   * it ended; throws RetryableJobError to be retried, anything else fails it (settled by `abandon`).
   */
  run(run: JobRun): Promise<JobOutcome>;
  /** Settles a job that ends without `run` finishing it (retries spent, an unexpected error, cancelled while queued). */
  abandon(job: JobRow, status: 'failed' | 'cancelled', error: { code: string; message: string }): Promise<JobOutcome>;
  /** Removes what outlived its retention (run every JOBS_SWEEP_MS on each instance). */
  sweep?(): Promise<void>;
}

class Lost extends Error {
  readonly jobError = 'lost' as const;
}

interface Running {
  job: JobRow;
  ctl: AbortController;
  reason: 'cancelled' | 'lost' | 'shutdown' | null;
  done: Promise<void>;
}

interface Engine {
  owner: string;
  handlers: Map<string, JobHandler>;
  running: Map<string, Running>;
  timers: NodeJS.Timeout[];
  started: boolean;
  ticking?: Promise<void>;
  again: boolean;
}

const engine = (): Engine =>
  singleton('job-engine', () => ({
    owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    handlers: new Map(),
    running: new Map(),
    timers: [],
    started: false,
    again: false,
  }));

/** Registers the handler of a kind (the first registration wins: one copy of lib/ runs each kind). */
export function registerJobHandler(handler: JobHandler): void {
  const handlers = engine().handlers;
  if (!handlers.has(handler.kind)) handlers.set(handler.kind, handler);
}

/** Starts claiming, heartbeats and webhook delivery on this instance (server start-up). */
export function startJobEngine(): void {
  const e = engine();
  if (e.started || env.JOBS_WORKERS === 0) return;
  e.started = true;
  const every = (ms: number, fn: () => Promise<unknown>) => {
    const t = setInterval(() => void fn().catch((err) => log('warn', 'job engine step failed', errorFields(err))), ms);
    t.unref();
    e.timers.push(t);
  };
  every(env.JOBS_POLL_MS, tick);
  every(env.JOBS_HEARTBEAT_MS, beat);
  every(Math.max(env.JOBS_POLL_MS, 1000), deliverWebhooks);
  every(env.JOBS_SWEEP_MS, async () => {
    for (const h of e.handlers.values()) await h.sweep?.();
  });
  kickJobs();
}

/** Looks for work now (a job was just submitted here). */
export function kickJobs(): void {
  if (!engine().started) return;
  void tick().catch((err) => log('warn', 'job engine step failed', errorFields(err)));
}

/** Jobs running on this instance. */
export function runningJobs(): number {
  return engine().running.size;
}

/** Stops claiming; running jobs are aborted (taken over by another instance, or this one after restart). */
export async function stopJobEngine(): Promise<void> {
  const e = engine();
  for (const t of e.timers) clearInterval(t);
  e.timers = [];
  e.started = false;
  for (const r of e.running.values()) {
    r.reason ??= 'shutdown';
    r.ctl.abort();
  }
  await Promise.all([...e.running.values()].map((r) => r.done));
  const handed = await releaseOwned(e.owner).catch(() => 0);
  if (handed) log('info', 'jobs handed back to the queue at shutdown', { jobs: handed });
}

async function tick(): Promise<void> {
  const e = engine();
  if (e.ticking) {
    e.again = true;
    return e.ticking;
  }
  e.ticking = (async () => {
    do {
      e.again = false;
      const cfg = getConfig().jobs;
      while (e.started && e.running.size < env.JOBS_WORKERS && e.handlers.size > 0) {
        const job = await claimJob(e.owner, [...e.handlers.keys()], {
          accountConcurrency: cfg.account_concurrency,
          platformConcurrency: cfg.platform_concurrency,
          staleMs: env.JOBS_STALE_MS,
        });
        if (!job) break;
        if (job.claims > 1) log('info', 'job taken over', { job: job.id, kind: job.kind, claims: job.claims });
        start(job);
      }
    } while (e.again);
  })();
  try {
    await e.ticking;
  } finally {
    e.ticking = undefined;
  }
}

function start(job: JobRow): void {
  const e = engine();
  const handler = e.handlers.get(job.kind)!;
  const ctl = new AbortController();
  const r: Running = { job, ctl, reason: null, done: Promise.resolve() };
  if (job.cancelRequested) {
    r.reason = 'cancelled';
    ctl.abort();
  }
  const runCtx: JobRun = {
    job,
    signal: ctl.signal,
    stopReason: () => r.reason,
    checkpoint: async (patch) => {
      if (!(await checkpoint(job.id, e.owner, patch))) {
        r.reason ??= 'lost';
        ctl.abort();
        throw new Lost('job no longer ours');
      }
    },
  };
  e.running.set(job.id, r);
  r.done = execute(handler, runCtx, r).finally(() => {
    e.running.delete(job.id);
    kickJobs();
  });
}

async function execute(handler: JobHandler, run: JobRun, r: Running): Promise<void> {
  const e = engine();
  const job = run.job;
  let outcome: JobOutcome;
  try {
    outcome = await handler.run(run);
  } catch (err) {
    const kind = kindOf(err);
    if (r.reason === 'lost' || r.reason === 'shutdown' || kind === 'lost') return; // another instance (or the next start) takes it over
    if (kind === 'retryable' && job.retries < job.maxRetries && r.reason !== 'cancelled') {
      const retry = err as RetryableJobError;
      const delay = backoffDelayMs(job.retries + 1, { baseMs: env.JOBS_RETRY_BASE_MS, factor: 4, maxMs: 60_000 });
      log('info', 'job attempt failed; retrying', { job: job.id, kind: job.kind, retry: job.retries + 1, delayMs: delay, error: retry.message });
      await requeue(job.id, e.owner, delay, { code: retry.code, message: retry.message });
      return;
    }
    const known = kind === 'failure' || kind === 'retryable';
    const error = known
      ? { code: (err as JobFailure).code, message: (err as JobFailure).message }
      : { code: 'internal_error', message: 'The job failed unexpectedly.' };
    if (!known) log('error', 'job failed', { job: job.id, kind: job.kind, ...errorFields(err) });
    try {
      outcome = await handler.abandon(job, r.reason === 'cancelled' ? 'cancelled' : 'failed', error);
    } catch (again) {
      log('error', 'job settlement failed; it is retried by the next claim', { job: job.id, ...errorFields(again) });
      return;
    }
  }
  if (r.reason === 'lost') return;
  await finishJob(job.id, e.owner, outcome.status, { ...outcome, webhook: true });
}

async function beat(): Promise<void> {
  const e = engine();
  const ids = [...e.running.keys()];
  if (ids.length === 0) return;
  const mine = new Map((await heartbeat(e.owner, ids)).map((b) => [b.id, b.cancelRequested]));
  for (const [id, r] of e.running) {
    if (!ids.includes(id)) continue;
    const cancel = mine.get(id);
    if (cancel === undefined) {
      r.reason ??= 'lost';
      r.ctl.abort();
    } else if (cancel && !r.reason) {
      r.reason = 'cancelled';
      r.ctl.abort();
    }
  }
}

/** A job ended while still queued (cancelled before any instance ran it): settled and ended here. */
export async function endQueuedJob(job: JobRow, status: 'cancelled' | 'failed', error: { code: string; message: string }): Promise<boolean> {
  const handler = engine().handlers.get(job.kind);
  if (!handler) return false;
  const outcome = await handler.abandon(job, status, error);
  return finishJob(job.id, null, outcome.status, { ...outcome, webhook: true });
}

// ---- completion webhooks (OpenAI's event names: video.completed, batch.completed, …) ------------

const EVENT_SUFFIX: Partial<Record<JobStatus, string>> = { succeeded: 'completed', failed: 'failed', cancelled: 'cancelled' };

export function webhookPayload(eventPrefix: string, job: { id: string; status: JobStatus; finishedAt: Date }) {
  return {
    id: alertEventId(['job', job.id, job.status]),
    object: 'event',
    type: `${eventPrefix}.${EVENT_SUFFIX[job.status] ?? job.status}`,
    created_at: Math.floor(job.finishedAt.getTime() / 1000),
    data: { id: job.id },
  };
}

async function deliverWebhooks(): Promise<void> {
  const e = engine();
  const due = await claimWebhooks(env.ALERT_WEBHOOK_TIMEOUT_MS + 5000);
  await Promise.all(
    due.map(async (d) => {
      if (!d.webhook_url || !d.secret) return webhookDone(d.id, 'no webhook URL', null);
      const payload = webhookPayload(e.handlers.get(d.kind)?.event ?? d.kind, { id: d.id, status: d.status, finishedAt: d.finishedAt });
      let error: string | null;
      try {
        error = await postWebhook(d.webhook_url, openSecret(d.secret), payload.id, JSON.stringify(payload));
      } catch {
        error = 'the signing secret could not be decrypted (SECRETS_KEY changed?)';
      }
      if (error === null) return webhookDone(d.id, null, null);
      const giveUp = d.attempts >= env.ALERT_MAX_ATTEMPTS;
      return webhookDone(
        d.id,
        giveUp ? `gave up after ${d.attempts} attempts: ${error}` : error,
        giveUp ? null : new Date(Date.now() + retryDelayMs(d.attempts)),
      );
    }),
  );
}
