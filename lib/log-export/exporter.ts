import { createHash, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { getDb } from '@/lib/db';
import { getConfig, type LogExportConfig } from '@/lib/config';
import { Prisma } from '@/lib/generated/prisma/client';
import { webhookHeaders } from '@/lib/alerts/signing';
import { formatPico, parseDecimal } from '@/lib/money';
import { breakdownView, parseStoredBreakdown } from '@/lib/pricing/breakdown';
import { decimalToPico } from '@/lib/billing/ledger';
import { backoffDelayMs } from '@/lib/backoff';
import { singleton } from '@/lib/singleton';
import { startPeriodic } from '@/lib/periodic';
import { log } from '@/lib/log';

// Request-log export (issue 45 item 5, docs/decisions/031-log-export.md): signed webhook batches of
// request-log rows to the sink in the operator config (`log_export`).
//
// - One instance delivers at a time: a lease row (LogExportState, renewed every tick, taken over
//   when it lapses); the cursor (createdAt, id of the last row delivered) is in the same row, so a
//   restart or another instance resumes where delivery stopped.
// - A batch holds at most max_rows rows and leaves at most max_seconds after a row could join it.
//   Rows younger than settle_seconds wait: the batched log writer stores rows a little after their
//   createdAt, and a cursor that passed them would skip them.
// - At least once: the cursor moves only after a 2xx. A batch's id (`webhook-id`) is derived from
//   its rows, so the same rows sent again carry the same id and the receiver de-duplicates on it.
// - A failed delivery is retried with exponential back-off (1 s doubling to 5 min), the same rows.
// - Replays (LogExportReplay) re-send a time range as batches marked `"replay": true`.
// - Metadata only: the request log stores no prompt or completion text, so there is none to send.

export const SINK_ID = 'default';
const TICK_MS = 500;
const LEASE_MS = 15_000;
const MAX_BACKOFF_MS = 5 * 60_000;
const TIMEOUT_MS = 10_000;

const exportSelect = {
  id: true,
  createdAt: true,
  userId: true,
  apiKeyId: true,
  endpoint: true,
  modelRequested: true,
  modelServed: true,
  channel: true,
  status: true,
  outcome: true,
  errorCode: true,
  stream: true,
  promptTokens: true,
  completionTokens: true,
  cacheReadTokens: true,
  cacheWriteTokens: true,
  tokensEstimated: true,
  costUsd: true,
  costCny: true,
  cnyRate: true,
  latencyMs: true,
  firstTokenMs: true,
  routeReason: true,
  priceBreakdown: true,
} satisfies Prisma.RequestLogSelect;

export type ExportRow = Prisma.RequestLogGetPayload<{ select: typeof exportSelect }>;

/** One row as the sink (and the JSONL export) sees it: snake_case, money as exact decimal text. */
export function exportRowJson(r: ExportRow, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: r.id,
    created_at: r.createdAt.toISOString(),
    account_id: r.userId,
    ...extra,
    api_key_id: r.apiKeyId,
    endpoint: r.endpoint,
    model_requested: r.modelRequested,
    model_served: r.modelServed,
    channel: r.channel,
    status: r.status,
    outcome: r.outcome,
    error_code: r.errorCode,
    stream: r.stream,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    cache_read_tokens: r.cacheReadTokens,
    cache_write_tokens: r.cacheWriteTokens,
    tokens_estimated: r.tokensEstimated,
    cost_usd: formatPico(decimalToPico(r.costUsd)),
    cost_cny: formatPico(decimalToPico(r.costCny)),
    cny_rate: r.cnyRate.toString(),
    latency_ms: r.latencyMs,
    first_token_ms: r.firstTokenMs,
    route_reason: r.routeReason,
    price_breakdown: priceBreakdownOf(r),
  };
}

/** The row's price breakdown as GET /api/logs/{id} shows it (docs/decisions/043); null when it has none. */
function priceBreakdownOf(r: ExportRow) {
  const stored = parseStoredBreakdown(r.priceBreakdown);
  return stored ? breakdownView(stored, parseDecimal(r.cnyRate.toFixed(8), 9)) : null;
}

interface Cursor {
  createdAt: Date;
  id: string;
}

/** Rows after `cursor` (in createdAt, id order) and before `upTo`, at most `limit`. */
export async function rowsAfter(cursor: Cursor | null, upTo: Date, limit: number, from?: Date): Promise<ExportRow[]> {
  const db = await getDb();
  const and: Prisma.RequestLogWhereInput[] = [{ createdAt: { lt: upTo } }];
  if (from) and.push({ createdAt: { gte: from } });
  if (cursor) and.push({ createdAt: { gte: cursor.createdAt } }, { OR: [{ createdAt: { gt: cursor.createdAt } }, { id: { gt: cursor.id } }] });
  return db.requestLog.findMany({ where: { AND: and }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit, select: exportSelect });
}

/** The batch id: the same rows give the same id on every retry and every instance. */
export function batchId(rows: ExportRow[], replayId?: string): string {
  const h = createHash('sha256').update(replayId ?? 'live');
  for (const r of rows) h.update('\u0000').update(r.id).update('\u0000').update(r.createdAt.toISOString());
  return 'lxb_' + h.digest('hex').slice(0, 32);
}

const agent = () => singleton('log-export-agent', () => new Agent({ connect: { timeout: TIMEOUT_MS }, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS }));

/** One signed POST of a batch; null on a 2xx, else the reason. */
export async function sendBatch(cfg: LogExportConfig, rows: ExportRow[], replay?: { id: string }): Promise<string | null> {
  const id = batchId(rows, replay?.id);
  const body = JSON.stringify({
    id,
    type: 'request_log.batch',
    replay: replay !== undefined,
    ...(replay ? { replay_id: replay.id } : {}),
    count: rows.length,
    first_created_at: rows[0]?.createdAt.toISOString() ?? null,
    last_created_at: rows.at(-1)?.createdAt.toISOString() ?? null,
    rows: rows.map((r) => exportRowJson(r)),
  });
  try {
    const res = await request(cfg.url, { method: 'POST', headers: webhookHeaders(cfg.secret, id, body), body, dispatcher: agent() });
    await res.body.dump();
    return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
  } catch (err) {
    return (err as Error).message || String(err);
  }
}

interface LocalState {
  owner: string;
  lastFlushMs: number;
  failures: number;
  nextAttemptMs: number;
}

const local = () => singleton<LocalState>('log-export', () => ({ owner: randomUUID(), lastFlushMs: Date.now(), failures: 0, nextAttemptMs: 0 }));

/** Takes or renews the lease; true when this process holds it. Creates the sink's row (cursor: now) the first time. */
async function holdLease(owner: string): Promise<boolean> {
  const db = await getDb();
  // Times from this process, not now(): the columns hold UTC without a zone, as Prisma writes them.
  const now = new Date();
  await db.$executeRaw`INSERT INTO "LogExportState" (id, "cursorCreatedAt", "cursorId") VALUES (${SINK_ID}, ${now}, '') ON CONFLICT (id) DO NOTHING`;
  const until = new Date(now.getTime() + LEASE_MS);
  const taken = await db.$executeRaw`
    UPDATE "LogExportState" SET "leaseOwner" = ${owner}, "leaseUntil" = ${until}
    WHERE id = ${SINK_ID} AND ("leaseOwner" = ${owner} OR "leaseOwner" IS NULL OR "leaseUntil" < ${now})`;
  return taken === 1;
}

function backoff(s: LocalState, error: string): Promise<unknown> {
  s.failures++;
  const delay = backoffDelayMs(s.failures, { baseMs: 1000, factor: 2, maxMs: MAX_BACKOFF_MS });
  s.nextAttemptMs = Date.now() + delay;
  log('warn', 'log export delivery failed; retrying', { error, retryInMs: delay });
  return getDb().then((db) => db.logExportState.update({ where: { id: SINK_ID }, data: { lastError: error.slice(0, 500), lastErrorAt: new Date() } }));
}

/** One round: live batches while full ones are ready (or one partial one when max_seconds is up), then one replay batch. */
export async function runLogExportOnce(cfg: LogExportConfig | undefined = getConfig().logExport): Promise<void> {
  if (!cfg) return;
  const s = local();
  if (Date.now() < s.nextAttemptMs) return;
  if (!(await holdLease(s.owner))) return;
  const db = await getDb();
  const state = await db.logExportState.findUniqueOrThrow({ where: { id: SINK_ID } });
  let cursor: Cursor | null = state.cursorCreatedAt ? { createdAt: state.cursorCreatedAt, id: state.cursorId ?? '' } : null;
  for (;;) {
    const upTo = new Date(Date.now() - cfg.settleSeconds * 1000);
    const rows = await rowsAfter(cursor, upTo, cfg.maxRows);
    if (rows.length === 0) {
      s.lastFlushMs = Date.now();
      break;
    }
    if (rows.length < cfg.maxRows && Date.now() - s.lastFlushMs < cfg.maxSeconds * 1000) break;
    const error = await sendBatch(cfg, rows);
    if (error) {
      await backoff(s, error);
      return;
    }
    s.failures = 0;
    s.lastFlushMs = Date.now();
    const last = rows[rows.length - 1];
    cursor = { createdAt: last.createdAt, id: last.id };
    await db.logExportState.update({
      where: { id: SINK_ID },
      data: {
        cursorCreatedAt: last.createdAt,
        cursorId: last.id,
        lastSuccessAt: new Date(),
        batches: { increment: 1 },
        rows: { increment: rows.length },
        updatedAt: new Date(),
      },
    });
    if (rows.length < cfg.maxRows) break;
  }
  await replayOnce(cfg, s);
}

async function replayOnce(cfg: LogExportConfig, s: LocalState): Promise<void> {
  const db = await getDb();
  const job = await db.logExportReplay.findFirst({ where: { status: { in: ['pending', 'running'] } }, orderBy: { createdAt: 'asc' } });
  if (!job) return;
  const cursor = job.cursorCreatedAt ? { createdAt: job.cursorCreatedAt, id: job.cursorId ?? '' } : null;
  const rows = await rowsAfter(cursor, job.to, cfg.maxRows, job.from);
  if (rows.length > 0) {
    const error = await sendBatch(cfg, rows, { id: job.id });
    if (error) {
      await db.logExportReplay.update({ where: { id: job.id }, data: { status: 'running', lastError: error.slice(0, 500) } });
      await backoff(s, error);
      return;
    }
    s.failures = 0;
  }
  const last = rows.at(-1);
  const done = rows.length < cfg.maxRows;
  await db.logExportReplay.update({
    where: { id: job.id },
    data: {
      status: done ? 'done' : 'running',
      ...(last ? { cursorCreatedAt: last.createdAt, cursorId: last.id } : {}),
      batches: { increment: rows.length > 0 ? 1 : 0 },
      rows: { increment: rows.length },
      lastError: null,
      ...(done ? { finishedAt: new Date() } : {}),
    },
  });
}

export const MAX_REPLAY_DAYS = 31;

/** Queues a replay of [from, to) (the console's action). */
export async function queueReplay(from: Date, to: Date, createdBy: string) {
  const db = await getDb();
  return db.logExportReplay.create({ data: { id: randomUUID(), from, to, createdBy } });
}

/** What the console shows: the sink, its cursor and lease, the last error, the replays. */
export async function logExportStatus() {
  const cfg = getConfig().logExport;
  const db = await getDb();
  const [state, replays] = await Promise.all([
    db.logExportState.findUnique({ where: { id: SINK_ID } }),
    db.logExportReplay.findMany({ orderBy: { createdAt: 'desc' }, take: 20 }),
  ]);
  return {
    configured: cfg !== undefined,
    url: cfg ? cfg.url.replace(/\?.*$/, '') : null,
    maxRows: cfg?.maxRows ?? null,
    maxSeconds: cfg?.maxSeconds ?? null,
    cursor: state?.cursorCreatedAt ? { createdAt: state.cursorCreatedAt.toISOString(), id: state.cursorId } : null,
    leaseHeld: state?.leaseUntil ? state.leaseUntil.getTime() > Date.now() : false,
    lastSuccessAt: state?.lastSuccessAt?.toISOString() ?? null,
    lastError: state?.lastError ?? null,
    lastErrorAt: state?.lastErrorAt?.toISOString() ?? null,
    batches: Number(state?.batches ?? 0n),
    rows: Number(state?.rows ?? 0n),
    replays: replays.map((r) => ({
      id: r.id,
      from: r.from.toISOString(),
      to: r.to.toISOString(),
      status: r.status,
      batches: r.batches,
      rows: r.rows,
      lastError: r.lastError,
      createdBy: r.createdBy,
      createdAt: r.createdAt.toISOString(),
    })),
  };
}

/** Started once per server process when `log_export` is configured. */
export function startLogExport(): void {
  if (!getConfig().logExport) return;
  startPeriodic('log export', TICK_MS, () => runLogExportOnce());
}
