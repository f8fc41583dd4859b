import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { Prisma } from '@/lib/generated/prisma/client';
import { formatPico } from '@/lib/billing/money';
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
  if (q.items.length >= MAX_BATCH && !q.flushing && q.failures === 0) void flushLogs();
  else schedule(env.LOG_FLUSH_MS);
}

function schedule(ms: number): void {
  const q = queue();
  if (q.timer) return;
  q.timer = setTimeout(() => {
    q.timer = undefined;
    void flushLogs();
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

/** Writes everything queued; concurrent callers share one flush. */
export async function flushLogs(): Promise<void> {
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
        if (charged.length) await promoteByMonthlySpend(charged).catch((err) => log('warn', 'tier promotion failed', errorFields(err)));
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

const dec = (pico: bigint) => new Prisma.Decimal(formatPico(pico));

async function writeBatch(batch: LogRecord[]): Promise<string[]> {
  const db = await getDb();
  const byUser = new Map<string, LogRecord[]>();
  for (const r of batch) {
    if (r.costPico <= 0n) continue;
    const list = byUser.get(r.userId) ?? [];
    list.push(r);
    byUser.set(r.userId, list);
  }
  await db.$transaction(async (tx) => {
    // Ids make the insert idempotent if a batch is retried after an ambiguous failure.
    await tx.requestLog.createMany({
      skipDuplicates: true,
      data: batch.map((r) => ({
        id: r.id,
        createdAt: r.createdAt,
        userId: r.userId,
        apiKeyId: r.apiKeyId,
        endpoint: r.endpoint,
        modelRequested: r.modelRequested,
        modelServed: r.modelServed,
        channel: r.channel,
        attempts: r.attempts as Prisma.InputJsonValue,
        status: r.status,
        outcome: r.outcome,
        stream: r.stream,
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        cacheReadTokens: r.cacheReadTokens,
        cacheWriteTokens: r.cacheWriteTokens,
        tokensEstimated: r.tokensEstimated,
        costUsd: dec(r.costPico),
        costCny: dec(r.costCnyPico),
        cnyRate: new Prisma.Decimal(r.cnyRate),
        latencyMs: r.latencyMs,
        firstTokenMs: r.firstTokenMs,
        errorCode: r.errorCode,
        routeReason: r.routeReason,
      })),
    });
    const already = new Set(
      (
        await tx.ledgerEntry.findMany({
          where: { kind: 'usage', reference: { in: [...byUser.values()].flat().map((r) => r.id) } },
          select: { reference: true },
        })
      ).map((e) => e.reference),
    );
    for (const [userId, records] of byUser) {
      const fresh = records.filter((r) => !already.has(r.id));
      if (fresh.length === 0) continue;
      const total = fresh.reduce((sum, r) => sum + r.costPico, 0n);
      const user = await tx.user.update({ where: { id: userId }, data: { balanceUsd: { decrement: dec(total) } }, select: { balanceUsd: true } });
      // Balance after each entry, walking back from the committed balance.
      let after = BigInt(user.balanceUsd.toFixed(12).replace('.', ''));
      const entries = [];
      for (let i = fresh.length - 1; i >= 0; i--) {
        entries.push({ userId, kind: 'usage' as const, amountUsd: dec(-fresh[i].costPico), balanceAfterUsd: dec(after), reference: fresh[i].id, createdAt: fresh[i].createdAt });
        after += fresh[i].costPico;
      }
      await tx.ledgerEntry.createMany({ data: entries.reverse() });
    }
  });
  return [...byUser.keys()];
}
