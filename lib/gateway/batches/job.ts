// A batch as a job (lib/gateway/jobs): each line of its input file runs through the same pipeline as a
// live request (runPipeline: every model and protocol, translation, fallback), as a synthetic
// request with the submitting key, at the batch price (RequestContext.batch: the model's batch
// discount) and outside the account's and model's request rates (admission endpoint `batch`),
// `batches.concurrency` lines at a time. A line's log row (its charge) has an id and time fixed by
// the batch and line, and is written before the line is recorded done: a line run again after a
// takeover writes the same row, logged and billed once. Output and error files in OpenAI's format.
import { createHash } from 'node:crypto';
import { getConfig, type ModelInfo } from '@/lib/config';
import { decryptSecret } from '@/lib/crypto';
import { getDb } from '@/lib/db';
import { flushLogs } from '@/lib/billing/writer';
import { finish, newContext } from '@/lib/gateway/context';
import { fail } from '@/lib/gateway/answer';
import { openaiProtocol } from '@/lib/gateway/surfaces/protocol';
import { runPipeline, type SurfaceSpec } from '@/lib/gateway/pipeline';
import { OnceSignal } from '@/lib/gateway/signal';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { openaiChatSurface } from '@/lib/gateway/surfaces/openai-chat';
import { embeddingsSurface } from '@/lib/gateway/surfaces/embeddings';
import { responsesSurface } from '@/lib/gateway/surfaces/responses';
import { JobFailure, registerJobHandler, type JobHandler, type JobOutcome, type JobRun } from '@/lib/gateway/jobs/engine';
import type { JobRow } from '@/lib/gateway/jobs/store';
import { fileContent, insertFile, sweepFiles } from '@/lib/gateway/batches/files';
import { log } from '@/lib/log';

export const BATCH_KIND = 'batch';
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings', '/v1/responses'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];
const SURFACES: Record<BatchEndpoint, SurfaceSpec> = {
  '/v1/chat/completions': openaiChatSurface,
  '/v1/embeddings': embeddingsSurface,
  '/v1/responses': responsesSurface,
};
const WINDOW_MS = 24 * 3_600_000;
/** A line the pipeline answered 429 or 5xx (a channel at its cap, every upstream down) is tried this many times. */
const LINE_TRIES = 3;

export interface BatchInput {
  input_file_id: string;
  endpoint: BatchEndpoint;
  completion_window: '24h';
  metadata: Record<string, string> | null;
  total: number;
  /** The submitting API key, sealed with SECRETS_KEY: each line is authenticated as it. */
  key: string;
  ip: string;
  /** The region every line must be served in (x-service-region, service.region or a pin at creation); absent: anywhere. */
  region?: string;
}

export interface BatchLineInput {
  custom_id: string;
  method: 'POST';
  url: string;
  body: Record<string, unknown>;
}

/** The lines of an input file; throws a 400-worthy message naming the first bad line. */
export function parseBatchFile(content: Buffer, endpoint: string, maxLines: number): BatchLineInput[] {
  const out: BatchLineInput[] = [];
  const seen = new Set<string>();
  const lines = content.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].trim();
    if (!text) continue;
    const where = `Line ${i + 1} of the input file`;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new Error(`${where} is not JSON.`);
    }
    const l = v as Partial<BatchLineInput> | null;
    if (!l || typeof l !== 'object' || typeof l.custom_id !== 'string' || l.custom_id === '') throw new Error(`${where} needs a "custom_id" string.`);
    if (seen.has(l.custom_id)) throw new Error(`${where} repeats the custom_id "${l.custom_id.slice(0, 64)}": each must be unique.`);
    seen.add(l.custom_id);
    if (l.method !== 'POST') throw new Error(`${where}: "method" must be "POST".`);
    if (l.url !== endpoint) throw new Error(`${where}: "url" must be the batch's endpoint ${endpoint}.`);
    if (!l.body || typeof l.body !== 'object' || Array.isArray(l.body)) throw new Error(`${where}: "body" must be an object (the request).`);
    if (l.body.stream === true) throw new Error(`${where}: batch requests cannot stream ("stream": true).`);
    out.push(l as BatchLineInput);
    if (out.length > maxLines) throw new Error(`The input file has more than ${maxLines} requests.`);
  }
  if (out.length === 0) throw new Error('The input file has no requests.');
  return out;
}

const hash = (s: string, n: number) => createHash('sha256').update(s).digest('hex').slice(0, n);
/** The output files' ids: fixed by the batch, so a batch finished twice (taken over) writes them once. */
export const outputFileId = (batchId: string, kind: 'output' | 'error') => `file-${kind === 'output' ? 'o' : 'e'}${hash(`${batchId}|${kind}`, 24)}`;

/** The synthetic request of one line: the batch's key, the line's body, never aborted (a cancel lets lines in flight finish). */
class LineRequest implements GatewayRequest {
  readonly method = 'POST';
  readonly query = '';
  readonly signal = new OnceSignal();
  readonly headers: Record<string, string | undefined>;
  constructor(
    readonly path: string,
    private readonly body: Buffer,
    key: string,
    readonly ip: string,
    region: string | undefined,
  ) {
    this.headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(body.length) };
    // The batch's region, as the x-service-region header of a live request: the pipeline keeps the line in it.
    if (region) this.headers['x-service-region'] = region;
  }
  async readBody(): Promise<Buffer> {
    return this.body;
  }
}

/** Keeps what the pipeline answers. */
class CaptureSink implements ResponseSink {
  started = false;
  status = 0;
  headers: Record<string, string> = {};
  private chunks: Buffer[] = [];
  start(status: number, headers: Record<string, string>): void {
    this.started = true;
    this.status = status;
    this.headers = headers;
  }
  async write(chunk: string | Uint8Array): Promise<void> {
    this.chunks.push(Buffer.from(chunk));
  }
  end(chunk?: string | Uint8Array): void {
    if (chunk !== undefined) this.chunks.push(Buffer.from(chunk));
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function discountOf(m: ModelInfo): number {
  return m.batchDiscountPercent ?? getConfig().batches.discount_percent;
}

/** Runs one line (retried on 429/5xx); answers its output line and whether it succeeded. */
async function runLine(
  job: JobRow,
  input: BatchInput,
  key: string,
  line: BatchLineInput,
  index: number,
  startedAt: number,
): Promise<{ ok: boolean; output: string }> {
  const surface = SURFACES[input.endpoint];
  const body = Buffer.from(JSON.stringify(line.body));
  let sink = new CaptureSink();
  let requestId = '';
  for (let attempt = 0; attempt < LINE_TRIES; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500 * attempt));
    requestId = `batch_req_${hash(`${job.id}|${index}|${attempt}`, 32)}`;
    // Its time is fixed too (the log row's key is its id and time): the batch's start, plus the line.
    const ctx = newContext(openaiProtocol, input.endpoint, getConfig(), undefined, {
      requestId,
      startedAt: startedAt + index * 10 + attempt,
      discountPercent: discountOf,
    });
    sink = new CaptureSink();
    const req = new LineRequest(input.endpoint, body, key, input.ip, input.region);
    try {
      await runPipeline(ctx, req, sink, surface);
    } catch (err) {
      await fail(ctx, sink, err);
    } finally {
      await finish(ctx);
    }
    if (sink.status !== 429 && sink.status < 500) break;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(sink.text());
  } catch {
    parsed = { error: { message: 'The reply could not be read.', type: 'server_error', param: null, code: 'internal_error' } };
  }
  const ok = sink.status >= 200 && sink.status < 300;
  const output = JSON.stringify({
    id: `batch_req_${hash(`${job.id}|${index}`, 32)}`,
    custom_id: line.custom_id,
    response: { status_code: sink.status, request_id: requestId, body: parsed },
    error: null,
  });
  return { ok, output };
}

async function doneLines(batchId: string): Promise<Set<number>> {
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<{ line: number }[]>(`SELECT "line" FROM "BatchLine" WHERE "batchId" = $1`, batchId);
  return new Set(rows.map((r) => r.line));
}

/** Lines done and failed so far. */
export async function lineCounts(batchId: string): Promise<{ completed: number; failed: number }> {
  const db = await getDb();
  const [r] = await db.$queryRawUnsafe<{ completed: bigint; failed: bigint }[]>(
    `SELECT count(*) FILTER (WHERE "ok") AS completed, count(*) FILTER (WHERE NOT "ok") AS failed FROM "BatchLine" WHERE "batchId" = $1`,
    batchId,
  );
  return { completed: Number(r?.completed ?? 0), failed: Number(r?.failed ?? 0) };
}

/** Writes the output and error files from the lines done (idempotent: fixed ids). */
async function finalize(job: JobRow, input: BatchInput, lines: BatchLineInput[], expired: Set<number>) {
  const db = await getDb();
  const rows = await db.$queryRawUnsafe<{ line: number; ok: boolean; output: string }[]>(
    `SELECT "line", "ok", "output" FROM "BatchLine" WHERE "batchId" = $1 ORDER BY "line"`,
    job.id,
  );
  const ok = rows.filter((r) => r.ok).map((r) => r.output);
  const bad = rows.filter((r) => !r.ok).map((r) => r.output);
  for (const i of expired) {
    bad.push(
      JSON.stringify({
        id: `batch_req_${hash(`${job.id}|${i}`, 32)}`,
        custom_id: lines[i].custom_id,
        response: null,
        error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
      }),
    );
  }
  const files: { output_file_id: string | null; error_file_id: string | null } = { output_file_id: null, error_file_id: null };
  if (ok.length) {
    const f = await insertFile(
      {
        id: outputFileId(job.id, 'output'),
        userId: job.userId,
        purpose: 'batch_output',
        filename: 'batch_output.jsonl',
        content: Buffer.from(ok.join('\n') + '\n'),
      },
      true,
    );
    files.output_file_id = f.id;
  }
  if (bad.length) {
    const f = await insertFile(
      {
        id: outputFileId(job.id, 'error'),
        userId: job.userId,
        purpose: 'batch_output',
        filename: 'batch_errors.jsonl',
        content: Buffer.from(bad.join('\n') + '\n'),
      },
      true,
    );
    files.error_file_id = f.id;
  }
  return { ...files, completed: ok.length, failed: bad.length, total: input.total };
}

export const batchHandler: JobHandler = {
  kind: BATCH_KIND,
  event: 'batch',

  /** Batch files past `batches.file_retention_days` are deleted. */
  async sweep(): Promise<void> {
    const n = await sweepFiles();
    if (n > 0) log('info', 'batch files past their retention deleted', { files: n });
  },

  async run(run: JobRun): Promise<JobOutcome> {
    const job = run.job;
    const input = job.input as unknown as BatchInput;
    const cfg = getConfig();
    const content = await fileContent(input.input_file_id, job.userId);
    if (!content) throw new JobFailure('input_file_missing', `The input file ${input.input_file_id} was deleted before the batch ran.`);
    const lines = parseBatchFile(content, input.endpoint, cfg.batches.max_lines);
    const key = decryptSecret(input.key);
    const done = await doneLines(job.id);
    const startedAt = (job.startedAt ?? job.createdAt).getTime();
    const deadline = job.createdAt.getTime() + WINDOW_MS;
    const todo = lines.map((_, i) => i).filter((i) => !done.has(i));
    const expired = new Set<number>();
    let next = 0;
    let finished = done.size;
    const db = await getDb();
    const worker = async () => {
      while (next < todo.length && !run.signal.aborted) {
        const i = todo[next++];
        if (Date.now() > deadline) {
          expired.add(i);
          continue;
        }
        const out = await runLine(job, input, key, lines[i], i, startedAt);
        // The line's log row (its charge) is in the database before the line is recorded done.
        await flushLogs(true);
        await db.$executeRawUnsafe(
          `INSERT INTO "BatchLine" ("batchId","line","ok","output") VALUES ($1,$2,$3,$4) ON CONFLICT DO NOTHING`,
          job.id,
          i,
          out.ok,
          out.output,
        );
        finished++;
        if (finished % 10 === 0 || finished === lines.length)
          await run.checkpoint({ progress: Math.floor((finished / lines.length) * 100) }).catch(() => undefined);
      }
    };
    await Promise.all(Array.from({ length: Math.min(cfg.batches.concurrency, Math.max(1, todo.length)) }, worker));
    const reason = run.stopReason();
    if (reason === 'lost' || reason === 'shutdown') throw new Error('stopped');
    for (let k = next; k < todo.length; k++) if (Date.now() > deadline) expired.add(todo[k]);
    const result = await finalize(job, input, lines, expired);
    if (reason === 'cancelled') return { status: 'cancelled', result, error: { code: 'cancelled', message: 'The batch was cancelled.' } };
    return { status: 'succeeded', result: { ...result, expired: expired.size > 0 } };
  },

  async abandon(job: JobRow, status, error): Promise<JobOutcome> {
    // Lines already run are billed (their log rows are written); their output is kept.
    const input = job.input as unknown as BatchInput;
    const result = await finalize(job, input, [], new Set()).catch(() => undefined);
    return { status, error, result };
  },
};

export function registerBatchJobs(): void {
  registerJobHandler(batchHandler);
}
