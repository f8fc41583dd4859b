import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { formatPico, usdToPico } from '@/lib/billing/money';
import { log, errorFields } from '@/lib/log';
import { inc } from '@/lib/metrics';
import { singleton } from '@/lib/singleton';
import { promoteByMonthlySpend } from '@/lib/billing/promotion';

// Write-behind queue for request logs and their usage charges. One transaction per batch writes
// the log rows, one usage ledger entry per charged request and each account's balance.
// Crash-loss bound: rows still queued (at most LOG_FLUSH_MS worth, or until the database is back)
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

interface Queue {
  items: LogRecord[];
  timer?: NodeJS.Timeout;
  flushing?: Promise<void>;
  failures: number;
}

const MAX_BATCH = 1000;
const queue = (): Queue => singleton('log-queue', () => ({ items: [], failures: 0 }));

export function enqueueLog(record: LogRecord): void {
  const q = queue();
  q.items.push(record);
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

// The batch is written with set-based SQL (unnest of column arrays): a handful of statements per
// batch whatever its size, and no per-row ORM query building, which dominated the CPU profile.
const INSERT_LOGS = `INSERT INTO "RequestLog" ("id","createdAt","userId","apiKeyId","endpoint","modelRequested","modelServed","channel","attempts","status","outcome","stream","promptTokens","completionTokens","cacheReadTokens","cacheWriteTokens","tokensEstimated","costUsd","costCny","cnyRate","latencyMs","firstTokenMs","errorCode","routeReason")
SELECT * FROM unnest($1::text[], $2::timestamp[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::int[], $11::text[], $12::bool[], $13::int[], $14::int[], $15::int[], $16::int[], $17::bool[], $18::numeric[], $19::numeric[], $20::numeric[], $21::int[], $22::int[], $23::text[], $24::text[])
ON CONFLICT ("id") DO NOTHING RETURNING "id"`;

const DEBIT_USERS = `UPDATE "User" AS u SET "balanceUsd" = u."balanceUsd" - d.total, "updatedAt" = now()
FROM unnest($1::uuid[], $2::numeric[]) AS d(id, total) WHERE u."id" = d.id RETURNING u."id", u."balanceUsd"::text AS balance`;

const INSERT_LEDGER = `INSERT INTO "LedgerEntry" ("userId","kind","amountUsd","balanceAfterUsd","reference","createdAt")
SELECT u, 'usage'::"LedgerKind", a, b, r, c FROM unnest($1::uuid[], $2::numeric[], $3::numeric[], $4::text[], $5::timestamp[]) AS t(u, a, b, r, c)`;

const column = <T>(rows: LogRecord[], pick: (r: LogRecord) => T): T[] => rows.map(pick);

async function writeBatch(batch: LogRecord[]): Promise<string[]> {
  const db = await getDb();
  return db.$transaction(async (tx) => {
    // Only rows inserted now are charged, so a batch retried after an ambiguous failure charges once.
    const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(
      INSERT_LOGS,
      column(batch, (r) => r.id),
      column(batch, (r) => r.createdAt.toISOString()),
      column(batch, (r) => r.userId),
      column(batch, (r) => r.apiKeyId),
      column(batch, (r) => r.endpoint),
      column(batch, (r) => r.modelRequested),
      column(batch, (r) => r.modelServed),
      column(batch, (r) => r.channel),
      column(batch, (r) => JSON.stringify(r.attempts)),
      column(batch, (r) => r.status),
      column(batch, (r) => r.outcome),
      column(batch, (r) => r.stream),
      column(batch, (r) => r.promptTokens),
      column(batch, (r) => r.completionTokens),
      column(batch, (r) => r.cacheReadTokens),
      column(batch, (r) => r.cacheWriteTokens),
      column(batch, (r) => r.tokensEstimated),
      column(batch, (r) => formatPico(r.costPico)),
      column(batch, (r) => formatPico(r.costCnyPico)),
      column(batch, (r) => r.cnyRate),
      column(batch, (r) => r.latencyMs),
      column(batch, (r) => r.firstTokenMs),
      column(batch, (r) => r.errorCode),
      column(batch, (r) => r.routeReason),
    );
    const fresh = new Set(inserted.map((r) => r.id));
    const byUser = new Map<string, LogRecord[]>();
    for (const r of batch) {
      if (r.costPico <= 0n || !fresh.has(r.id)) continue;
      const list = byUser.get(r.userId);
      if (list) list.push(r);
      else byUser.set(r.userId, [r]);
    }
    if (byUser.size === 0) return [];
    const users = [...byUser.keys()];
    const totals = users.map((u) => formatPico(byUser.get(u)!.reduce((sum, r) => sum + r.costPico, 0n)));
    const balances = await tx.$queryRawUnsafe<{ id: string; balance: string }[]>(DEBIT_USERS, users, totals);
    const ledger = { user: [] as string[], amount: [] as string[], after: [] as string[], reference: [] as string[], at: [] as string[] };
    for (const { id, balance } of balances) {
      // Balance after each entry, walking back from the committed balance.
      let after = usdToPico(balance);
      const records = byUser.get(id)!;
      const afters: bigint[] = [];
      for (let i = records.length - 1; i >= 0; i--) {
        afters[i] = after;
        after += records[i].costPico;
      }
      records.forEach((r, i) => {
        ledger.user.push(id);
        ledger.amount.push(formatPico(-r.costPico));
        ledger.after.push(formatPico(afters[i]));
        ledger.reference.push(r.id);
        ledger.at.push(r.createdAt.toISOString());
      });
    }
    await tx.$executeRawUnsafe(INSERT_LEDGER, ledger.user, ledger.amount, ledger.after, ledger.reference, ledger.at);
    return users;
  });
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
