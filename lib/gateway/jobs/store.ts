// The job table (prisma/migrations/20261128174000_jobs_videos_batches). Raw SQL rather than the
// Prisma client: the claim needs FOR UPDATE SKIP LOCKED and an advisory lock, which Prisma's query
// API cannot express; the same statements run on PostgreSQL and on the embedded PGlite.
import { randomBytes } from 'node:crypto';
import { getDb } from '@/lib/db';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const TERMINAL: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface JobRow {
  id: string;
  kind: string;
  userId: string;
  apiKeyId: string | null;
  model: string | null;
  status: JobStatus;
  cancelRequested: boolean;
  input: Record<string, unknown>;
  state: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  progress: number;
  retries: number;
  claims: number;
  maxRetries: number;
  owner: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  expiresAt: Date | null;
}

/** An id as OpenAI spells its objects' (`video_…`, `batch_…`): a prefix and 24 random bytes in hex. */
export function newJobId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

async function query<T>(sql: string, ...params: unknown[]): Promise<T[]> {
  const db = await getDb();
  return db.$queryRawUnsafe<T[]>(sql, ...params);
}

const COLUMNS = `"id","kind","userId"::text AS "userId","apiKeyId"::text AS "apiKeyId","model","status","cancelRequested","input","state","result","error","progress","retries","claims","maxRetries","owner","createdAt","startedAt","finishedAt","expiresAt"`;

export async function insertJob(job: {
  id: string;
  kind: string;
  userId: string;
  apiKeyId: string | null;
  model: string | null;
  input: unknown;
  maxRetries?: number;
  status?: JobStatus;
  result?: unknown;
}): Promise<JobRow> {
  const [row] = await query<JobRow>(
    `INSERT INTO "Job" ("id","kind","userId","apiKeyId","model","input","maxRetries","status","result","finishedAt")
     VALUES ($1,$2,$3::uuid,$4::uuid,$5,$6::jsonb,$7,$8,$9::jsonb, CASE WHEN $8 IN ('succeeded','failed','cancelled') THEN now() END)
     RETURNING ${COLUMNS}`,
    job.id,
    job.kind,
    job.userId,
    job.apiKeyId,
    job.model,
    JSON.stringify(job.input),
    job.maxRetries ?? 3,
    job.status ?? 'queued',
    job.result === undefined ? null : JSON.stringify(job.result),
  );
  return row;
}

export async function getJob(id: string, userId?: string): Promise<JobRow | null> {
  const rows = userId
    ? await query<JobRow>(`SELECT ${COLUMNS} FROM "Job" WHERE "id" = $1 AND "userId" = $2::uuid`, id, userId)
    : await query<JobRow>(`SELECT ${COLUMNS} FROM "Job" WHERE "id" = $1`, id);
  return rows[0] ?? null;
}

/** An account's jobs of one kind, newest first, after the job `after` (a cursor as OpenAI's lists take). */
export async function listJobs(userId: string, kind: string, opts: { limit: number; after?: string; order?: 'asc' | 'desc' }): Promise<JobRow[]> {
  const desc = opts.order !== 'asc';
  const cmp = desc ? '<' : '>';
  const after = opts.after ? `AND ("createdAt", "id") ${cmp} (SELECT "createdAt", "id" FROM "Job" WHERE "id" = $4)` : '';
  const params: unknown[] = [userId, kind, opts.limit];
  if (opts.after) params.push(opts.after);
  return query<JobRow>(
    `SELECT ${COLUMNS} FROM "Job" WHERE "userId" = $1::uuid AND "kind" = $2 ${after}
     ORDER BY "createdAt" ${desc ? 'DESC' : 'ASC'}, "id" ${desc ? 'DESC' : 'ASC'} LIMIT $3`,
    ...params,
  );
}

export interface ClaimLimits {
  /** Running jobs of one account, of every kind, at most. */
  accountConcurrency: number;
  /** Running jobs across the platform, at most. */
  platformConcurrency: number;
  /** A running job whose heartbeat is older than this is taken over. */
  staleMs: number;
}

/**
 * Claims one job for `owner`: a queued job due now, or a running one whose instance stopped
 * beating (died). Claims are serialised by an advisory lock (the concurrency caps count running
 * jobs, which two claims at once could both pass); SKIP LOCKED leaves rows another transaction
 * holds (a cancel, a heartbeat) to the next round.
 */
export async function claimJob(owner: string, kinds: string[], limits: ClaimLimits): Promise<JobRow | null> {
  const db = await getDb();
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(7043431)`);
    const stale = `(now() - ($2::int * interval '1 millisecond'))`;
    const live = `r."status" = 'running' AND r."heartbeatAt" >= ${stale}`;
    const rows = await tx.$queryRawUnsafe<JobRow[]>(
      `UPDATE "Job" SET "status" = 'running', "owner" = $1, "heartbeatAt" = now(), "claims" = "claims" + 1,
              "startedAt" = COALESCE("startedAt", now())
       WHERE "id" = (
         SELECT j."id" FROM "Job" j
         WHERE j."kind" = ANY($3::text[])
           AND ((j."status" = 'queued' AND j."runAfter" <= now()) OR (j."status" = 'running' AND j."heartbeatAt" < ${stale}))
           AND (SELECT count(*) FROM "Job" r WHERE ${live}) < $5
           AND (SELECT count(*) FROM "Job" r WHERE ${live} AND r."userId" = j."userId") < $4
         ORDER BY j."runAfter", j."createdAt" LIMIT 1
         FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      owner,
      limits.staleMs,
      kinds,
      limits.accountConcurrency,
      limits.platformConcurrency,
    );
    return rows[0] ?? null;
  });
}

/** Beats for the jobs `owner` runs; answers those still its own and whether each was asked to cancel. */
export async function heartbeat(owner: string, ids: string[]): Promise<{ id: string; cancelRequested: boolean }[]> {
  if (ids.length === 0) return [];
  return query(
    `UPDATE "Job" SET "heartbeatAt" = now() WHERE "id" = ANY($1::text[]) AND "owner" = $2 AND "status" = 'running'
     RETURNING "id", "cancelRequested"`,
    ids,
    owner,
  );
}

/** Saves a running job's progress and resumable state; false when the job is no longer this owner's. */
export async function checkpoint(id: string, owner: string, patch: { state?: unknown; progress?: number }): Promise<boolean> {
  const rows = await query<{ id: string }>(
    `UPDATE "Job" SET "state" = COALESCE($3::jsonb, "state"), "progress" = COALESCE($4, "progress"), "heartbeatAt" = now()
     WHERE "id" = $1 AND "owner" = $2 AND "status" = 'running' RETURNING "id"`,
    id,
    owner,
    patch.state === undefined ? null : JSON.stringify(patch.state),
    patch.progress ?? null,
  );
  return rows.length > 0;
}

/** Ends a job (fenced by its owner: a job taken over is not ended by the instance that lost it). */
export async function finishJob(
  id: string,
  owner: string | null,
  status: Exclude<JobStatus, 'queued' | 'running'>,
  out: { result?: unknown; error?: { code: string; message: string }; expiresAt?: Date | null; webhook: boolean },
): Promise<boolean> {
  const rows = await query<{ id: string }>(
    `UPDATE "Job" SET "status" = $3, "result" = COALESCE($4::jsonb, "result"), "error" = $5::jsonb, "finishedAt" = now(),
            "progress" = CASE WHEN $3 = 'succeeded' THEN 100 ELSE "progress" END, "owner" = NULL, "heartbeatAt" = NULL,
            "expiresAt" = $6, "webhookDueAt" = CASE WHEN $7 THEN now() END
     WHERE "id" = $1 AND (("status" = 'running' AND "owner" = $2) OR ($2::text IS NULL AND "status" = 'queued')) RETURNING "id"`,
    id,
    owner,
    status,
    out.result === undefined ? null : JSON.stringify(out.result),
    out.error ? JSON.stringify(out.error) : null,
    out.expiresAt ?? null,
    out.webhook,
  );
  return rows.length > 0;
}

/** Puts a failed attempt back in the queue, due after `delayMs`. */
export async function requeue(id: string, owner: string, delayMs: number, error: { code: string; message: string }): Promise<boolean> {
  const rows = await query<{ id: string }>(
    `UPDATE "Job" SET "status" = 'queued', "owner" = NULL, "heartbeatAt" = NULL, "retries" = "retries" + 1, "error" = $4::jsonb,
            "runAfter" = now() + ($3::int * interval '1 millisecond')
     WHERE "id" = $1 AND "owner" = $2 AND "status" = 'running' RETURNING "id"`,
    id,
    owner,
    Math.round(delayMs),
    JSON.stringify(error),
  );
  return rows.length > 0;
}

/** Hands the jobs `owner` still holds back to the queue (a clean shutdown): another instance claims them at once. */
export async function releaseOwned(owner: string): Promise<number> {
  const rows = await query<{ id: string }>(
    `UPDATE "Job" SET "status" = 'queued', "owner" = NULL, "heartbeatAt" = NULL, "runAfter" = now() WHERE "owner" = $1 AND "status" = 'running' RETURNING "id"`,
    owner,
  );
  return rows.length;
}

/** Asks a job to stop; answers its row after (null: no such job of the account's). */
export async function requestCancel(id: string, userId: string): Promise<JobRow | null> {
  const rows = await query<JobRow>(
    `UPDATE "Job" SET "cancelRequested" = true WHERE "id" = $1 AND "userId" = $2::uuid AND "status" IN ('queued','running')
     RETURNING ${COLUMNS}`,
    id,
    userId,
  );
  return rows[0] ?? (await getJob(id, userId));
}

export async function deleteJob(id: string, userId: string): Promise<boolean> {
  const rows = await query<{ id: string }>(`DELETE FROM "Job" WHERE "id" = $1 AND "userId" = $2::uuid RETURNING "id"`, id, userId);
  return rows.length > 0;
}

export async function deleteExpired(id: string): Promise<void> {
  await query(`DELETE FROM "Job" WHERE "id" = $1 AND "expiresAt" < now() RETURNING "id"`, id);
}

/** Jobs whose retention ended: their files are removed by the caller, then their rows. */
export async function expiredJobs(kind: string, limit = 100): Promise<{ id: string; state: Record<string, unknown> }[]> {
  return query(`SELECT "id", "state" FROM "Job" WHERE "kind" = $1 AND "expiresAt" < now() LIMIT $2`, kind, limit);
}

// ---- completion webhooks ----------------------------------------------------------------------

export interface WebhookDue {
  id: string;
  kind: string;
  status: JobStatus;
  attempts: number;
  finishedAt: Date;
  webhook_url: string | null;
  secret: string | null;
}

/** Claims completion webhooks due now (pushing the next attempt past the delivery's timeout, so a crashed claim is retried). */
export async function claimWebhooks(leaseMs: number, limit = 20): Promise<WebhookDue[]> {
  return query<WebhookDue>(
    `UPDATE "Job" j SET "webhookAttempts" = j."webhookAttempts" + 1, "webhookDueAt" = now() + ($1::int * interval '1 millisecond')
     FROM (SELECT "id" FROM "Job" WHERE "webhookDueAt" <= now() AND "webhookDeliveredAt" IS NULL ORDER BY "webhookDueAt" LIMIT $2 FOR UPDATE SKIP LOCKED) d
     WHERE j."id" = d."id"
     RETURNING j."id", j."kind", j."status", j."webhookAttempts" AS attempts, j."finishedAt",
       (SELECT s."webhookUrl" FROM "AlertSettings" s WHERE s."userId" = j."userId") AS webhook_url,
       (SELECT s."secret" FROM "AlertSettings" s WHERE s."userId" = j."userId") AS secret`,
    leaseMs,
    limit,
  );
}

export async function webhookDone(id: string, error: string | null, nextAt: Date | null): Promise<void> {
  await query(
    `UPDATE "Job" SET "webhookDeliveredAt" = CASE WHEN $2::text IS NULL THEN now() END, "webhookError" = $2, "webhookDueAt" = $3 WHERE "id" = $1`,
    id,
    error,
    nextAt,
  );
}

/** An account's most recent jobs of every kind (the dashboard's logs page). */
export async function recentJobs(userId: string, limit = 10): Promise<JobRow[]> {
  return query<JobRow>(
    `SELECT ${COLUMNS} FROM "Job" WHERE "userId" = $1::uuid AND (NOT "cancelRequested" OR "kind" <> 'video') ORDER BY "createdAt" DESC LIMIT $2`,
    userId,
    limit,
  );
}
