import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { formatPico, usdToPico } from '@/lib/billing/money';
import { log, errorFields } from '@/lib/log';
import { inc } from '@/lib/metrics';
import { backoffDelayMs } from '@/lib/backoff';
import { resetSingleton, singleton } from '@/lib/singleton';
import pg from 'pg';
import { promoteByMonthlySpend } from '@/lib/billing/promotion';
import { FAILED_CONDITION } from '@/lib/billing/failed';
import type { StoredBreakdown } from '@/lib/billing/breakdown';

// Write-behind queue for request logs and their usage charges. One transaction per batch writes
// the log rows, one usage ledger entry per charged request and each account's balance.
// Crash-loss bound: rows still queued (at most LOG_FLUSH_MS worth and about MAX_BATCH rows plus those
// of one batch write, or everything queued until the database is back)
// are lost on a hard kill; SIGTERM flushes them, and what the database does not take then is spooled
// to a file under DATA_DIR and written at the next start (spoolQueuedLogs, replayLogSpool). While
// the database is down, batches are retried with back-off and nothing is dropped.
// A row PostgreSQL refuses must never hold up the rows behind it (a batch retried forever would
// stop all billing writes): rows are made storable when queued (sanitiseRow), and a batch that the
// database refuses while it is reachable is split until the refused row is found; that row is
// written in a minimal form (money and counts kept, text dropped) or, failing that, set aside in
// "RequestLogRejected" with the error. The queue is bounded (LOG_QUEUE_MAX): at the bound the
// gateway sheds new requests (503) rather than serve requests it could not bill.

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
  /** The region of the channel that served (its operator-config `region`), if it has one. */
  region?: string | null;
  /** 'plan': the account's subscription paid (lib/plans); not charged to the balance. Unset: the balance. */
  billedTo?: 'plan' | null;
  /** How the cost was made (lib/billing/breakdown.ts): null when nothing was priced. */
  priceBreakdown?: StoredBreakdown | null;
  /** The key's project and the member who made the key (docs/decisions/056): their budgets' spend. */
  projectId?: string | null;
  memberId?: string | null;
}

/**
 * A queued row: its JSON (serialised at once, so the queue holds one flat string per request
 * rather than a tree of objects that would outlive the young generation) and what the queue
 * itself needs to know.
 */
interface QueuedRow {
  userId: string;
  apiKeyId: string | null;
  projectId: string | null;
  memberId: string | null;
  /** Unix ms of the request (a key's monthly spend counts only this month's). */
  at: number;
  /** What the row charges the balance (0 for a plan-paid row). */
  costPico: bigint;
  /** A plan-paid row's use of the plan's windows, until it is written (lib/plans: loading a window). */
  plan?: { usd: bigint; tokens: number };
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
  q.items.push(queued(record));
  // A full batch is written at once, unless a flush is running (it takes the new rows too) or a
  // failed one is backing off (its retry timer takes them).
  if (q.items.length >= MAX_BATCH && !q.flushing && q.failures === 0) void flushLogs(false);
  else schedule(env.LOG_FLUSH_MS);
}

function queued(r: LogRecord): QueuedRow {
  const onPlan = r.billedTo === 'plan';
  return {
    userId: r.userId,
    apiKeyId: r.apiKeyId,
    projectId: r.projectId ?? null,
    memberId: r.memberId ?? null,
    at: r.createdAt.getTime(),
    costPico: onPlan ? 0n : r.costPico,
    plan: onPlan ? { usd: r.costPico, tokens: r.promptTokens + r.completionTokens + r.cacheReadTokens + r.cacheWriteTokens } : undefined,
    json: rowJson(r),
  };
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

/** Charges of one key queued here and not yet in the database, made at or after `sinceMs` (for loading a key's spend). */
export function pendingKeyCharges(keyId: string, sinceMs = 0): bigint {
  let total = 0n;
  for (const item of queue().items) if (item.apiKeyId === keyId && item.at >= sinceMs) total += item.costPico;
  return total;
}

/**
 * Charges of one member's keys or one project's keys (docs/decisions/056) of account `userId` queued
 * here and not yet in the database, made at or after `sinceMs` (for loading their monthly spend).
 */
export function pendingGroupCharges(userId: string, group: { memberId?: string; projectId?: string }, sinceMs: number): bigint {
  let total = 0n;
  for (const item of queue().items) {
    if (item.userId !== userId || item.at < sinceMs) continue;
    if (group.memberId !== undefined && item.memberId !== group.memberId) continue;
    if (group.projectId !== undefined && item.projectId !== group.projectId) continue;
    total += item.costPico;
  }
  return total;
}

/** Plan-paid rows of an account queued here and not yet in the database, made at or after `sinceMs`: their list-price USD, tokens and count. */
export function pendingPlanUse(userId: string, sinceMs: number): { usd: bigint; tokens: number; requests: number } {
  const out = { usd: 0n, tokens: 0, requests: 0 };
  for (const item of queue().items) {
    if (item.userId !== userId || !item.plan || item.at < sinceMs) continue;
    out.usd += item.plan.usd;
    out.tokens += item.plan.tokens;
    out.requests++;
  }
  return out;
}

export function queuedLogCount(): number {
  return queue().items.length;
}

/**
 * True while the queue is at its bound (LOG_QUEUE_MAX, reached only while the database has been
 * unwritable for a long time): new requests are refused with 503 rather than served unbilled.
 */
export function logQueueFull(): boolean {
  return queue().items.length >= env.LOG_QUEUE_MAX;
}

/**
 * Writes rows at once, bypassing the queue: a job's settlement (lib/jobs/settle.ts), which must be
 * in the database before the job is marked done. Idempotent like every write here: a row whose
 * ("id","createdAt") is stored already is neither logged nor charged again.
 */
export async function writeLogsNow(records: LogRecord[]): Promise<void> {
  if (records.length === 0) return;
  await writeIsolating(records.map(queued));
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
        const charged = await writeIsolating(batch);
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
        schedule(backoffDelayMs(q.failures, { baseMs: 500, factor: 2, maxMs: 30_000 }));
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
// retried after an ambiguous failure charges once. The daily rollup (UsageDaily: account x model x
// key x day) adds the inserted rows in the same statement. Each ledger entry's balance-after walks back
// from the committed balance in (createdAt, id) order.
// The log is partitioned by day, so its key is ("id","createdAt"): a row's createdAt is its request's
// own time, serialised once when queued, so a replayed row carries the same key and conflicts.
const COLUMNS = `"id","createdAt","userId","apiKeyId","endpoint","modelRequested","modelServed","channel","attempts","status","outcome","stream","promptTokens","completionTokens","cacheReadTokens","cacheWriteTokens","tokensEstimated","costUsd","costCny","cnyRate","latencyMs","firstTokenMs","errorCode","routeReason","region","billedTo","priceBreakdown","projectId","memberId"`;
/** UsageDaily's key for requests made without an API key (its primary key holds the key). */
export const NO_KEY = '00000000-0000-0000-0000-000000000000';
export const WRITE_BATCH = `WITH input AS (
  SELECT * FROM json_populate_recordset(NULL::"RequestLog", $1::json)
), ins AS (
  INSERT INTO "RequestLog" (${COLUMNS}) SELECT ${COLUMNS} FROM input
  ON CONFLICT ("id","createdAt") DO NOTHING
  RETURNING "id", "userId", "apiKeyId", "costUsd", "createdAt", "modelServed", "modelRequested", "promptTokens", "completionTokens", "outcome", "costCny", "billedTo", "projectId"
), rollup AS (
  INSERT INTO "UsageDaily" AS r ("userId","day","model","apiKeyId","requests","failed","promptTokens","completionTokens","costUsd","costCny")
  SELECT "userId", "createdAt"::date, COALESCE("modelServed", "modelRequested", ''), COALESCE("apiKeyId", '${NO_KEY}'), count(*),
         count(*) FILTER (WHERE ${FAILED_CONDITION}),
         sum("promptTokens"), sum("completionTokens"),
         -- Money charged to the balance: a plan-paid row's list price is the plan's (lib/plans), not spend.
         COALESCE(sum("costUsd") FILTER (WHERE "billedTo" IS NULL), 0), COALESCE(sum("costCny") FILTER (WHERE "billedTo" IS NULL), 0)
  FROM ins GROUP BY 1, 2, 3, 4
  ON CONFLICT ("userId","day","model","apiKeyId") DO UPDATE SET
    "requests" = r."requests" + EXCLUDED."requests",
    "failed" = r."failed" + EXCLUDED."failed",
    "costCny" = r."costCny" + EXCLUDED."costCny",
    "promptTokens" = r."promptTokens" + EXCLUDED."promptTokens",
    "completionTokens" = r."completionTokens" + EXCLUDED."completionTokens",
    "costUsd" = r."costUsd" + EXCLUDED."costUsd"
), project_rollup AS (
  -- The same per project (docs/decisions/056): only rows of keys in a project.
  INSERT INTO "UsageDailyProject" AS r ("userId","day","projectId","requests","failed","promptTokens","completionTokens","costUsd","costCny")
  SELECT "userId", "createdAt"::date, "projectId", count(*), count(*) FILTER (WHERE ${FAILED_CONDITION}),
         sum("promptTokens"), sum("completionTokens"),
         COALESCE(sum("costUsd") FILTER (WHERE "billedTo" IS NULL), 0), COALESCE(sum("costCny") FILTER (WHERE "billedTo" IS NULL), 0)
  FROM ins WHERE "projectId" IS NOT NULL GROUP BY 1, 2, 3
  ON CONFLICT ("userId","day","projectId") DO UPDATE SET
    "requests" = r."requests" + EXCLUDED."requests",
    "failed" = r."failed" + EXCLUDED."failed",
    "costCny" = r."costCny" + EXCLUDED."costCny",
    "promptTokens" = r."promptTokens" + EXCLUDED."promptTokens",
    "completionTokens" = r."completionTokens" + EXCLUDED."completionTokens",
    "costUsd" = r."costUsd" + EXCLUDED."costUsd"
), charged AS (
  SELECT * FROM ins WHERE "costUsd" > 0 AND "billedTo" IS NULL
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

const INT4_MAX = 2_147_483_647;
/** A count or duration as the integer column stores it: whole, within int4, never negative. */
const int4 = (v: number): number => (Number.isFinite(v) ? Math.min(INT4_MAX, Math.max(0, Math.round(v))) : 0);
/** Longest text kept in a log column (model names, codes, reasons). */
const MAX_TEXT = 512;

/**
 * Text PostgreSQL can store: no NUL (text columns refuse it, json refuses \u0000), no lone UTF-16
 * surrogate (an upstream message cut mid-emoji; json refuses it), bounded length.
 */
export function storableText(s: string, max = MAX_TEXT): string {
  let out = s.length > max ? s.slice(0, max) : s;
  if (out.includes('\u0000')) out = out.replace(/\u0000/g, '');
  return out.isWellFormed() ? out : out.toWellFormed();
}

const text = (s: string | null): string | null => (s === null ? null : storableText(s));

// Cheap test on the serialised row for what PostgreSQL refuses in json/text: an escaped NUL or a
// lone surrogate (JSON.stringify escapes both). Only such rows pay for the cleaning pass.
const SUSPECT = /\\u(?:0000|d[89a-f])/i;

/** The row's JSON as queued: serialised once; cleaned only if it holds something unstorable. */
function rowJson(r: LogRecord): string {
  const json = JSON.stringify(toRow(r));
  if (!SUSPECT.test(json)) return json;
  return JSON.stringify(toRow(r), (_k, v: unknown) => (typeof v === 'string' ? storableText(v, 4096) : v));
}

function toRow(r: LogRecord) {
  return {
    id: r.id,
    createdAt: r.createdAt.toISOString(),
    userId: r.userId,
    apiKeyId: r.apiKeyId,
    endpoint: r.endpoint,
    modelRequested: text(r.modelRequested),
    modelServed: text(r.modelServed),
    channel: text(r.channel),
    attempts: r.attempts,
    status: int4(r.status),
    outcome: r.outcome,
    stream: r.stream,
    promptTokens: int4(r.promptTokens),
    completionTokens: int4(r.completionTokens),
    cacheReadTokens: int4(r.cacheReadTokens),
    cacheWriteTokens: int4(r.cacheWriteTokens),
    tokensEstimated: r.tokensEstimated,
    costUsd: formatPico(r.costPico),
    costCny: formatPico(r.costCnyPico),
    cnyRate: r.cnyRate,
    latencyMs: int4(r.latencyMs),
    firstTokenMs: r.firstTokenMs === null ? null : int4(r.firstTokenMs),
    errorCode: text(r.errorCode),
    routeReason: text(r.routeReason),
    region: r.region ?? null,
    billedTo: r.billedTo ?? null,
    priceBreakdown: r.priceBreakdown ?? null,
    projectId: r.projectId ?? null,
    memberId: r.memberId ?? null,
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

/**
 * Writes a batch; if the database refuses it while it is reachable (a row it cannot store, not an
 * outage), halves it until the refused row is alone, and writes that one in a minimal form or sets
 * it aside. Throws only when the database is unreachable (the caller retries with back-off).
 */
async function writeIsolating(batch: QueuedRow[]): Promise<string[]> {
  try {
    return await writeBatch(batch);
  } catch (err) {
    if (!(await refusedForItsRows(err))) throw err;
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      const first = await writeIsolating(batch.slice(0, half));
      const second = await writeIsolating(batch.slice(half));
      return [...new Set([...first, ...second])];
    }
    return writePoisoned(batch[0], err);
  }
}

/** One row the database refused: its minimal form (billing kept), else set aside with the error. */
async function writePoisoned(row: QueuedRow, err: unknown): Promise<string[]> {
  inc('gateway_log_rows_refused_total');
  log('error', 'request log row refused by the database; writing a minimal form', { ...errorFields(err), row: row.json.slice(0, 2000) });
  const minimal = minimalRow(row);
  if (minimal) {
    try {
      return await writeBatch([minimal]);
    } catch (again) {
      if (!(await refusedForItsRows(again))) throw again;
      err = again;
    }
  }
  const parsed = safeParse(row.json);
  const id = typeof parsed?.id === 'string' ? parsed.id : `unknown-${Date.now()}`;
  const rejected = JSON.stringify([
    { id, userId: row.userId, costUsd: formatPico(row.costPico), row: row.json, error: storableText(String((err as Error)?.message ?? err), 2000) },
  ]);
  const pool = writerPool();
  if (pool) await pool.query(SET_ASIDE, [rejected]);
  else await (await getDb()).$executeRawUnsafe(SET_ASIDE, rejected);
  inc('gateway_log_rows_set_aside_total');
  log('error', 'request log row set aside in RequestLogRejected', { id, userId: row.userId, costUsd: formatPico(row.costPico) });
  return [];
}

const SET_ASIDE = `INSERT INTO "RequestLogRejected" ("id","userId","costUsd","row","error")
  SELECT "id", "userId", "costUsd", "row", "error" FROM json_to_recordset($1::json)
    AS x("id" text, "userId" text, "costUsd" text, "row" text, "error" text)
  ON CONFLICT ("id") DO NOTHING`;

function safeParse(json: string): Record<string, unknown> | null {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The row with every free-text column dropped: what it is billed for survives. */
function minimalRow(row: QueuedRow): QueuedRow | null {
  const r = safeParse(row.json);
  if (!r) return null;
  for (const k of ['modelRequested', 'channel', 'errorCode', 'routeReason'] as const) r[k] = null;
  r.attempts = [];
  r.modelServed = typeof r.modelServed === 'string' && /^[\x20-\x7e]{1,200}$/.test(r.modelServed) ? r.modelServed : null;
  return { ...row, json: JSON.stringify(r) };
}

/** The SQLSTATE of a database error, wherever the driver or Prisma put it. */
function sqlState(err: unknown): string | undefined {
  for (let e = err as Record<string, unknown> | undefined, depth = 0; e && depth < 4; e = e.cause as Record<string, unknown> | undefined, depth++) {
    for (const c of [e.code, (e.meta as Record<string, unknown> | undefined)?.code, e.originalCode]) {
      if (typeof c === 'string' && /^[0-9A-Z]{5}$/.test(c) && !c.startsWith('P')) return c;
    }
  }
  return undefined;
}

/**
 * Whether a failed write was refused because of what its rows hold (then the writer isolates the
 * row) rather than an outage or a fault of the database or schema (then the whole batch is retried
 * with back-off, nothing set aside). Data exceptions (22), integrity violations (23) and program
 * limits (54) are the rows'. Without a SQLSTATE (the embedded driver wraps its errors), a database
 * that still answers means the rows.
 */
async function refusedForItsRows(err: unknown): Promise<boolean> {
  const state = sqlState(err);
  if (state) return /^(22|23|54)/.test(state);
  return databaseReachable();
}

/** Whether the database answers at all. */
async function databaseReachable(): Promise<boolean> {
  try {
    const pool = writerPool();
    if (pool) await pool.query('SELECT 1');
    else await (await getDb()).$queryRawUnsafe('SELECT 1');
    return true;
  } catch {
    return false;
  }
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

// ---- the shutdown spool ------------------------------------------------------------------------
// Rows the database did not take by the end of a shutdown (it is down, or slower than the shutdown
// allows) go to DATA_DIR/log-spool as JSON lines, one queued row each, exactly as it would have
// been written. The next start writes them with the same statement as any batch: a row whose
// request id is in the log already (a batch committed without the gateway hearing so, or a spool
// written twice) is skipped, and only inserted rows are charged, so each request is logged and
// charged once however often a file is replayed.

const SPOOL_PREFIX = 'spool-';
const spoolDir = () => path.resolve(env.DATA_DIR, 'log-spool');

function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text);
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
}

/**
 * Writes every queued row to a new spool file, durably (fsync'd, then renamed into place, then the
 * folder fsync'd): after this returns the rows survive the process and the machine. The queue is
 * left as it is (a batch still in flight may yet commit; its rows are then skipped at replay).
 * Null when nothing is queued; throws when the file cannot be written.
 */
export function spoolQueuedLogs(): { file: string; rows: number; costPico: bigint } | null {
  const items = queue().items;
  if (items.length === 0) return null;
  const dir = spoolDir();
  mkdirSync(dir, { recursive: true });
  const name = `${SPOOL_PREFIX}${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${randomUUID().slice(0, 8)}.jsonl`;
  const tmp = path.join(dir, `.${name}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  let costPico = 0n;
  try {
    let chunk = '';
    for (const item of items) {
      chunk += `${item.json}\n`;
      costPico += item.costPico;
      if (chunk.length >= 1 << 20) {
        writeAll(fd, chunk);
        chunk = '';
      }
    }
    if (chunk) writeAll(fd, chunk);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const file = path.join(dir, name);
  renameSync(tmp, file);
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  return { file, rows: items.length, costPico };
}

/** A spooled line as the queue holds it; null when it is not a row (a line cut short). */
function spooledRow(line: string): QueuedRow | null {
  const r = safeParse(line);
  if (!r || typeof r.userId !== 'string' || typeof r.createdAt !== 'string' || typeof r.costUsd !== 'string') return null;
  try {
    return {
      userId: r.userId,
      apiKeyId: typeof r.apiKeyId === 'string' ? r.apiKeyId : null,
      projectId: typeof r.projectId === 'string' ? r.projectId : null,
      memberId: typeof r.memberId === 'string' ? r.memberId : null,
      at: Date.parse(r.createdAt),
      costPico: r.billedTo === 'plan' ? 0n : usdToPico(r.costUsd),
      plan:
        r.billedTo === 'plan'
          ? {
              usd: usdToPico(r.costUsd),
              tokens: Number(r.promptTokens) + Number(r.completionTokens) + Number(r.cacheReadTokens) + Number(r.cacheWriteTokens) || 0,
            }
          : undefined,
      json: line,
    };
  } catch {
    return null;
  }
}

/**
 * At start: writes the rows of every spool file (a shutdown that could not reach the database) and
 * deletes each file once its rows are in. Rows the database does not take now stay queued (the
 * writer retries them) and their file stays for the next start. Once per process.
 */
export async function replayLogSpool(): Promise<void> {
  const done = singleton('log-spool-replay', () => ({ started: false }));
  if (done.started) return;
  done.started = true;
  const dir = spoolDir();
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.startsWith(SPOOL_PREFIX) && f.endsWith('.jsonl'))
      .sort();
  } catch {
    return; // no spool folder: nothing was ever spooled here
  }
  if (files.length === 0) return;
  const spooled = files.map((name) => {
    const file = path.join(dir, name);
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const rows = lines.map(spooledRow).filter((r): r is QueuedRow => r !== null);
    if (rows.length < lines.length) log('error', 'spooled request log lines unreadable; skipped', { file, skipped: lines.length - rows.length });
    return { file, rows };
  });
  // Through the queue: until they are written, the rows' charges count as pending (live balances
  // loaded meanwhile subtract them), and a row the database refuses is isolated as any other.
  const q = queue();
  for (const { rows } of spooled) q.items.push(...rows);
  await flushLogs(true);
  const left = new Set(q.items);
  for (const { file, rows } of spooled) {
    const unwritten = rows.filter((r) => left.has(r)).length;
    if (unwritten > 0) {
      log('error', 'spooled request log rows not written yet: the writer retries them, and the file stays for the next start', {
        file,
        rows: rows.length,
        unwritten,
      });
      continue;
    }
    unlinkSync(file);
    log('warn', 'spooled request log rows written', { file, rows: rows.length });
  }
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
