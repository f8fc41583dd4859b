// OpenAI's Files API, for the Batch API: POST /v1/files (multipart: purpose=batch and a JSONL
// file, size-capped), GET /v1/files, GET/DELETE /v1/files/{id}, GET /v1/files/{id}/content. The
// bytes are kept in the database (StoredFile), so every instance serves them, for
// `batches.file_retention_days` from their creation: then gone (404), and deleted by the sweep.
import { randomBytes } from 'node:crypto';
import { authenticate, type Principal } from '@/lib/auth/principal';
import { GatewayError } from '@/lib/errors';
import { getDb } from '@/lib/db';
import { checkKey, type RequestContext } from '@/lib/gateway/context';
import { responseHeaders } from '@/lib/gateway/answer';
import * as record from '@/lib/gateway/record';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { checkDenied } from '@/lib/gateway/admission';
import { getConfig } from '@/lib/config';

export interface FileRow {
  id: string;
  userId: string;
  purpose: string;
  filename: string;
  bytes: number;
  createdAt: Date;
}

const COLS = `"id", "userId"::text AS "userId", "purpose", "filename", "bytes", "createdAt"`;

export const newFileId = () => `file-${randomBytes(12).toString('hex')}`;

export async function insertFile(f: { id: string; userId: string; purpose: string; filename: string; content: Buffer }, idempotent = false): Promise<FileRow> {
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<FileRow[]>(
    `INSERT INTO "StoredFile" ("id","userId","purpose","filename","bytes","content") VALUES ($1,$2::uuid,$3,$4,$5,$6)
     ${idempotent ? 'ON CONFLICT ("id") DO NOTHING' : ''} RETURNING ${COLS}`,
    f.id,
    f.userId,
    f.purpose,
    f.filename,
    f.content.length,
    f.content,
  );
  return rows[0] ?? (await fileOf(f.id, f.userId))!;
}

/** Milliseconds a batch file is kept from its creation (`batches.file_retention_days`). */
export const fileRetentionMs = () => Math.round(getConfig().batches.file_retention_days * 86_400_000);
/** SQL: a file still within its retention ($n: the retention in ms). A file past it is gone to its owner at once, before the sweep deletes it. */
const LIVE = (n: number) => `"createdAt" > now() - ($${n}::bigint * interval '1 millisecond')`;

/** A file of the account's, unless it outlived its retention. */
export async function fileOf(id: string, userId: string): Promise<FileRow | null> {
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<FileRow[]>(
    `SELECT ${COLS} FROM "StoredFile" WHERE "id" = $1 AND "userId" = $2::uuid AND ${LIVE(3)}`,
    id,
    userId,
    fileRetentionMs(),
  );
  return rows[0] ?? null;
}

/**
 * Deletes the files past their retention (the job engine's sweep, every JOBS_SWEEP_MS), save the
 * input of a batch still queued or running (it would fail for want of its lines).
 */
export async function sweepFiles(limit = 1000): Promise<number> {
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `DELETE FROM "StoredFile" WHERE "id" IN (
       SELECT f."id" FROM "StoredFile" f
       WHERE f."createdAt" <= now() - ($1::bigint * interval '1 millisecond')
         AND NOT EXISTS (SELECT 1 FROM "Job" j WHERE j."kind" = 'batch' AND j."status" IN ('queued','running') AND j."input"->>'input_file_id' = f."id")
       LIMIT $2)
     RETURNING "id"`,
    fileRetentionMs(),
    limit,
  );
  return rows.length;
}

export async function fileContent(id: string, userId: string): Promise<Buffer | null> {
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<{ content: Uint8Array }[]>(`SELECT "content" FROM "StoredFile" WHERE "id" = $1 AND "userId" = $2::uuid`, id, userId);
  return rows[0] ? Buffer.from(rows[0].content) : null;
}

export function fileObject(f: FileRow) {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: Math.floor(f.createdAt.getTime() / 1000),
    filename: f.filename,
    purpose: f.purpose,
    status: 'processed',
    expires_at: Math.floor((f.createdAt.getTime() + fileRetentionMs()) / 1000),
    status_details: null,
  };
}

export async function caller(ctx: RequestContext, req: GatewayRequest): Promise<Principal> {
  const principal = await authenticate(req);
  checkKey(ctx, principal, req);
  return checkDenied(principal);
}

export function sendJson(ctx: RequestContext, sink: ResponseSink, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  record.answered(ctx.rec, status);
  sink.start(status, responseHeaders(ctx, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }));
  sink.end(text);
}

export function segment(req: GatewayRequest, i = 3): string {
  const s = req.path.split('/')[i] ?? '';
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const invalid = (message: string, param: string) => new GatewayError('invalid_request', message, { param });
/** Room for the multipart framing and the purpose field around the file itself. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** POST /v1/files. */
export async function createFile(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(ctx, req);
  const max = ctx.cfg.batches.max_file_bytes;
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data;/i.test(type))
    throw new GatewayError('unsupported_media_type', 'Upload the file as multipart/form-data with the fields "purpose" and "file".');
  let raw: Buffer;
  try {
    raw = await req.readBody(max + MULTIPART_OVERHEAD);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'body_too_large')
      throw new GatewayError('body_too_large', `The file is larger than the ${max}-byte limit for batch input files.`, { param: 'file' });
    throw err;
  }
  let form: FormData;
  try {
    // The WHATWG multipart parser of Node's fetch implementation (undici): no hand-written parser.
    form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
  } catch {
    throw invalid('The multipart body could not be read.', 'file');
  }
  const purpose = form.get('purpose');
  if (purpose !== 'batch') throw invalid('"purpose" must be "batch": this gateway keeps files for the Batch API only.', 'purpose');
  const file = form.get('file');
  if (!file || typeof file === 'string') throw invalid('"file" is required: the JSONL file of the batch.', 'file');
  if (file.size > max) throw new GatewayError('body_too_large', `The file is larger than the ${max}-byte limit for batch input files.`, { param: 'file' });
  if (file.size === 0) throw invalid('"file" is empty.', 'file');
  const content = Buffer.from(await file.arrayBuffer());
  const name = (file.name || 'batch.jsonl').slice(0, 255);
  const row = await insertFile({ id: newFileId(), userId: principal.userId, purpose: 'batch', filename: name, content });
  sendJson(ctx, sink, fileObject(row));
}

async function ownFile(ctx: RequestContext, req: GatewayRequest): Promise<FileRow> {
  const principal = await caller(ctx, req);
  const id = segment(req);
  const f = /^file-[0-9a-zA-Z-]{1,80}$/.test(id) ? await fileOf(id, principal.userId) : null;
  if (!f) throw new GatewayError('not_found', `No such File object: ${id}`, { param: 'id' });
  return f;
}

/** GET /v1/files/{id}. */
export async function getFile(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  sendJson(ctx, sink, fileObject(await ownFile(ctx, req)));
}

/** GET /v1/files. */
export async function listFiles(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(ctx, req);
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<FileRow[]>(
    `SELECT ${COLS} FROM "StoredFile" WHERE "userId" = $1::uuid AND ${LIVE(2)} ORDER BY "createdAt" DESC LIMIT 10000`,
    principal.userId,
    fileRetentionMs(),
  );
  const data = rows.map(fileObject);
  sendJson(ctx, sink, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
}

/** DELETE /v1/files/{id}. */
export async function deleteFile(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const f = await ownFile(ctx, req);
  const db = await getDb();
  await db.$executeRawUnsafe(`DELETE FROM "StoredFile" WHERE "id" = $1`, f.id);
  sendJson(ctx, sink, { id: f.id, object: 'file', deleted: true });
}

/** GET /v1/files/{id}/content. */
export async function getFileContent(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const f = await ownFile(ctx, req);
  const content = (await fileContent(f.id, f.userId)) ?? Buffer.alloc(0);
  record.answered(ctx.rec, 200);
  sink.start(200, responseHeaders(ctx, { 'content-type': 'application/octet-stream', 'content-length': String(content.length) }));
  sink.end(content);
}
