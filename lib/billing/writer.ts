import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { formatPico } from '@/lib/billing/money';
import { log, errorFields } from '@/lib/log';
import { inc } from '@/lib/metrics';
import { resetSingleton, singleton } from '@/lib/singleton';
import pg from 'pg';
import { promoteByMonthlySpend } from '@/lib/billing/promotion';

// Write-behind queue for request logs and their usage charges. One transaction per batch writes
// the log rows, one usage ledger entry per charged request and each account's balance.
// Crash-loss bound: rows still queued (at most LOG_FLUSH_MS worth and about MAX_BATCH rows plus those
// of one batch write, or everything queued until the database is back)
// are lost on a hard kill; SIGTERM flushes them. While the database is down, batches are retried
// with back-off and nothing is dropped.

export interface LogRecord {
  id: string;
  createdAt: Date;
  userId: string;
  apiKeyId: string | null;
  endpoint: string;
  modelRequested: string | null;
  modelServed: string | null;
  channel: string | null;
  attempts: unknown[];
  status: number;
  outcome: string;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  tokensEstimated: boolean;
  costPico: bigint;
  costCnyPico: bigint;
  cnyRate: string;
  latencyMs: number;
  firstTokenMs: number | null;
  errorCode: string | null;
  routeReason: string | null;
}

/**
 * A queued row: its JSON (serialised at once, so the queue holds one flat string per request
 * rather than a tree of objects that would outlive the young generation) and what the queue
 * itself needs to know.
 */
interface QueuedRow {
  userId: string;
  costPico: bigint;
  json: string;
}

interface Queue {
  items: QueuedRow[];
  timer?: NodeJS.Timeout;
  flushing?: Promise<void>;
  failures: number;
}

const { Pool } = pg;
type Pool = InstanceType<typeof Pool>;
const MAX_BATCH = 1000;
const queue = (): Queue => singleton('log-queue', () => ({ items: [], failures: 0 }));

export function enqueueLog(record: LogRecord): void {
  const q = queue();
  q.items.push({ userId: record.userId, costPico: record.costPico, json: JSON.stringify(toRow(record)) });
  // A full batch is written at once, unless a flush is running (it takes the new rows too) or a
  // failed one is backing off (its retry timer takes them).
  if (q.items.length >= MAX_BATCH && !q.flushing && q.failures === 0) void flushLogs(false);
  else schedule(env.LOG_FLUSH_MS);
}

function schedule(ms: number): void {
  const q = queue();
  if (q.timer) return;
  q.timer = setTimeout(() => {
    q.timer = undefined;
    void flushLogs(false);
  }, ms);
  q.timer.unref();
}

/** Charges queued here and not yet in the database, per account (for loading a live balance). */
export function pendingCharges(userId: string): bigint {
  let total = 0n;
  for (const item of queue().items) if (item.userId === userId) total += item.costPico;
  return total;
}

export function queuedLogCount(): number {
  return queue().items.length;
}

/**
 * Writes queued rows; concurrent callers share one flush. A timer tick writes one batch and leaves a
 * partial remainder for the next tick (tiny back-to-back batches cost far more per row);
 * `drain` (shutdown, tests) writes everything.
 */
export async function flushLogs(drain = true): Promise<void> {
  const q = queue();
  // One flush at a time: a caller that finds one running waits for it, then writes whatever is
  // left (rows that arrived meanwhile, or a batch that failed). Two flushes at once would write
  // the same batch twice and each splice the other's rows off the queue.
  while (q.flushing) await q.flushing;
  if (q.items.length === 0) return;
  const run = (async () => {
    while (q.items.length > 0) {
      const batch = q.items.slice(0, MAX_BATCH);
      try {
        const charged = await writeBatch(batch);
        q.items.splice(0, batch.length);
        q.failures = 0;
        inc('gateway_log_rows_written_total', {}, batch.length);
        const due = duePromotionChecks(charged);
        if (due.length) await promoteByMonthlySpend(due).catch((err) => log('warn', 'tier promotion failed', errorFields(err)));
        if (!drain && q.items.length > 0 && q.items.length < MAX_BATCH) {
          schedule(env.LOG_FLUSH_MS);
          return;
        }
      } catch (err) {
        q.failures++;
        inc('gateway_log_write_failures_total');
        log('warn', 'request log batch not written; will retry', { queued: q.items.length, ...errorFields(err) });
        schedule(Math.min(30_000, 250 * 2 ** Math.min(q.failures, 7)));
        return;
      }
    }
  })();
  q.flushing = run;
  try {
    await run;
  } finally {
    if (q.flushing === run) q.flushing = undefined;
  }
}

// A batch is ONE statement: the rows travel as one JSON document (serialised natively, parsed by
// PostgreSQL in C), and data-modifying CTEs insert the logs, debit each account once and append one
// usage ledger entry per charged request, atomically. Only rows inserted now are charged, so a batch
// retried after an ambiguous failure charges once. Each ledger entry's balance-after walks back
// from the committed balance in (createdAt, id) order.
const COLUMNS = `"id","createdAt","userId","apiKeyId","endpoint","modelRequested","modelServed","channel","attempts","status","outcome","stream","promptTokens","completionTokens","cacheReadTokens","cacheWriteTokens","tokensEstimated","costUsd","costCny","cnyRate","latencyMs","firstTokenMs","errorCode","routeReason"`;
const WRITE_BATCH = `WITH input AS (
  SELECT * FROM json_populate_recordset(NULL::"RequestLog", $1::json)
), ins AS (
  INSERT INTO "RequestLog" (${COLUMNS}) SELECT ${COLUMNS} FROM input
  ON CONFLICT ("id") DO NOTHING
  RETURNING "id", "userId", "costUsd", "createdAt"
), charged AS (
  SELECT * FROM ins WHERE "costUsd" > 0
), totals AS (
  SELECT "userId", sum("costUsd") AS total FROM charged GROUP BY "userId"
), debited AS (
  UPDATE "User" AS u SET "balanceUsd" = u."balanceUsd" - t.total, "updatedAt" = now()
  FROM totals t WHERE u."id" = t."userId"
  RETURNING u."id", u."balanceUsd" AS balance
), ledger AS (
  INSERT INTO "LedgerEntry" ("userId","kind","amountUsd","balanceAfterUsd","reference","createdAt")
  SELECT c."userId", 'usage'::"LedgerKind", -c."costUsd",
         d.balance + COALESCE(sum(c."costUsd") OVER (PARTITION BY c."userId" ORDER BY c."createdAt", c."id" ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0),
         c."id", c."createdAt"
  FROM charged c JOIN debited d ON d."id" = c."userId"
  ORDER BY c."createdAt", c."id"
  RETURNING "userId"
)
SELECT DISTINCT "userId"::text AS id FROM ledger`;

function toRow(r: LogRecord) {
  return {
    id: r.id,
    createdAt: r.createdAt.toISOString(),
    userId: r.userId,
    apiKeyId: r.apiKeyId,
    endpoint: r.endpoint,
    modelRequested: r.modelRequested,
    modelServed: r.modelServed,
    channel: r.channel,
    attempts: r.attempts,
    status: r.status,
    outcome: r.outcome,
    stream: r.stream,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    cacheReadTokens: r.cacheReadTokens,
    cacheWriteTokens: r.cacheWriteTokens,
    tokensEstimated: r.tokensEstimated,
    costUsd: formatPico(r.costPico),
    costCny: formatPico(r.costCnyPico),
    cnyRate: r.cnyRate,
    latencyMs: r.latencyMs,
    firstTokenMs: r.firstTokenMs,
    errorCode: r.errorCode,
    routeReason: r.routeReason,
  };
}

/**
 * With PostgreSQL, batches go through a small pg pool of their own: one plain query per batch, no
 * ORM in between, and never queued behind dashboard queries. The embedded database (PGlite) admits
 * one connection, so there the batch goes through Prisma.
 */
function writerPool(): Pool | null {
  if (!env.DATABASE_URL) return null;
  return singleton('log-writer-pool', () => {
    const pool = new Pool({ connectionString: env.DATABASE_URL, max: 2, idleTimeoutMillis: 30_000 });
    // An idle connection dropped by a database restart must not crash the process; the next batch
    // opens a fresh one (and is retried while the database is down).
    pool.on('error', (err) => log('warn', 'log writer connection lost', errorFields(err)));
    return pool;
  });
}

/** Writes one batch; answers the accounts charged by it. */
async function writeBatch(batch: QueuedRow[]): Promise<string[]> {
  let json = '[';
  for (let i = 0; i < batch.length; i++) json += i === 0 ? batch[i].json : `,${batch[i].json}`;
  json += ']';
  const pool = writerPool();
  if (pool) {
    const { rows } = await pool.query<{ id: string }>(WRITE_BATCH, [json]);
    return rows.map((r) => r.id);
  }
  const db = await getDb();
  const charged = await db.$queryRawUnsafe<{ id: string }[]>(WRITE_BATCH, json);
  return charged.map((r) => r.id);
}

/** Closes the writer's own connections (after the final flush at shutdown). */
export async function closeLogWriter(): Promise<void> {
  if (!env.DATABASE_URL) return;
  const pool = writerPool();
  resetSingleton('log-writer-pool');
  await pool?.end().catch(() => undefined);
}

// Promotion sums an account's month of usage: checked at most once a minute per account.
const PROMOTION_CHECK_MS = 60_000;
const promotionChecked = () => singleton('promotion-checked', () => new Map<string, number>());

function duePromotionChecks(userIds: string[]): string[] {
  const checked = promotionChecked();
  const now = Date.now();
  if (checked.size > 100_000) checked.clear();
  return userIds.filter((id) => {
    if ((checked.get(id) ?? 0) > now - PROMOTION_CHECK_MS) return false;
    checked.set(id, now);
    return true;
  });
}
