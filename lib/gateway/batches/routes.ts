// OpenAI's Batch API: POST /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel,
// GET /v1/batches; the batch itself runs as a job (lib/gateway/batches/job.ts).
import { extractApiKey } from '@/lib/keys/api-key';
import { encryptSecret } from '@/lib/crypto';
import { GatewayError } from '@/lib/errors';
import { open, type RequestContext } from '@/lib/gateway/context';
import * as record from '@/lib/gateway/record';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { keyClientIp } from '@/lib/keys/access';
import { endQueuedJob, kickJobs } from '@/lib/gateway/jobs/engine';
import { getJob, insertJob, listJobs, newJobId, requestCancel, type JobRow } from '@/lib/gateway/jobs/store';
import { caller, createFile, deleteFile, fileContent, fileOf, getFile, getFileContent, listFiles, segment, sendJson } from '@/lib/gateway/batches/files';
import { BATCH_ENDPOINTS, BATCH_KIND, lineCounts, parseBatchFile, type BatchEndpoint, type BatchInput, type BatchLineInput } from '@/lib/gateway/batches/job';
import { inRegion, REGION_HEADER, regionUnavailable, requestRegion } from '@/lib/region';

const invalid = (message: string, param: string) => new GatewayError('invalid_request', message, { param });
const ts = (d: Date | null | undefined) => (d ? Math.floor(d.getTime() / 1000) : null);

interface BatchResult {
  output_file_id?: string | null;
  error_file_id?: string | null;
  completed?: number;
  failed?: number;
  expired?: boolean;
}

/** A batch job as OpenAI's batch object. */
export async function batchObject(job: JobRow) {
  const input = job.input as unknown as BatchInput;
  const result = (job.result ?? {}) as BatchResult;
  const counts = job.result ? { completed: result.completed ?? 0, failed: result.failed ?? 0 } : await lineCounts(job.id);
  const status =
    job.status === 'queued'
      ? job.cancelRequested
        ? 'cancelling'
        : 'validating'
      : job.status === 'running'
        ? job.cancelRequested
          ? 'cancelling'
          : 'in_progress'
        : job.status === 'succeeded'
          ? result.expired
            ? 'expired'
            : 'completed'
          : job.status;
  const finished = ts(job.finishedAt);
  return {
    id: job.id,
    object: 'batch',
    endpoint: input.endpoint,
    errors:
      job.status === 'failed' && job.error ? { object: 'list', data: [{ code: job.error.code, message: job.error.message, param: null, line: null }] } : null,
    input_file_id: input.input_file_id,
    completion_window: input.completion_window,
    status,
    output_file_id: result.output_file_id ?? null,
    error_file_id: result.error_file_id ?? null,
    created_at: ts(job.createdAt),
    in_progress_at: ts(job.startedAt),
    expires_at: Math.floor(job.createdAt.getTime() / 1000) + 86_400,
    finalizing_at: job.status === 'succeeded' ? finished : null,
    completed_at: status === 'completed' ? finished : null,
    failed_at: job.status === 'failed' ? finished : null,
    expired_at: status === 'expired' ? finished : null,
    cancelling_at: null,
    cancelled_at: job.status === 'cancelled' ? finished : null,
    request_counts: { total: input.total, completed: counts.completed, failed: counts.failed },
    metadata: input.metadata,
  };
}

/** POST /v1/batches. */
export async function createBatch(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const body = (await open(ctx, req)).json;
  const principal = ctx.principal!;
  if (typeof body.input_file_id !== 'string' || body.input_file_id === '')
    throw invalid('"input_file_id" is required: the id of a file uploaded with purpose "batch".', 'input_file_id');
  if (typeof body.endpoint !== 'string' || !(BATCH_ENDPOINTS as readonly string[]).includes(body.endpoint))
    throw invalid(`"endpoint" must be one of ${BATCH_ENDPOINTS.join(', ')}.`, 'endpoint');
  if (body.completion_window !== '24h') throw invalid('"completion_window" must be "24h".', 'completion_window');
  const metadata = body.metadata ?? null;
  if (
    metadata !== null &&
    (typeof metadata !== 'object' ||
      Array.isArray(metadata) ||
      Object.entries(metadata).length > 16 ||
      Object.entries(metadata).some(([k, v]) => k.length > 64 || typeof v !== 'string' || v.length > 512))
  )
    throw invalid('"metadata" must be an object of at most 16 string values (keys up to 64, values up to 512 characters).', 'metadata');
  const file = await fileOf(body.input_file_id, principal.userId);
  if (!file || file.purpose !== 'batch')
    throw new GatewayError('not_found', `No batch input file with id '${body.input_file_id}'.`, { param: 'input_file_id' });
  const content = (await fileContent(file.id, principal.userId))!;
  let lines: BatchLineInput[];
  try {
    lines = parseBatchFile(content, body.endpoint, ctx.cfg.batches.max_lines);
  } catch (err) {
    throw invalid((err as Error).message, 'input_file_id');
  }
  const total = lines.length;
  // Where its lines may be served (as a live request's: lib/region.ts), kept with the batch:
  // each line is routed only to that region's channels. A model of the file no channel of the
  // region serves: a 503 naming the region now, rather than every line of it failing later.
  const region = requestRegion(req.headers[REGION_HEADER], body, principal.regionPin ?? {});
  record.planned(ctx.rec, ctx.rec.model, region);
  if (region !== null) {
    const named = [...new Set(lines.map((l) => l.body.model).filter((m): m is string => typeof m === 'string'))];
    const outside = named.filter((m) => ctx.cfg.models.has(m) && inRegion(ctx.cfg.channelsByModel.get(m) ?? [], region).length === 0);
    if (outside.length > 0) throw regionUnavailable(region, outside.slice(0, 5));
  }
  const key = extractApiKey(req.headers as { authorization?: string; 'x-api-key'?: string })!;
  const input: BatchInput = {
    input_file_id: file.id,
    endpoint: body.endpoint as BatchEndpoint,
    completion_window: '24h',
    metadata: metadata as Record<string, string> | null,
    total,
    key: encryptSecret(key),
    ip: keyClientIp(req),
    ...(region !== null ? { region } : {}),
  };
  const job = await insertJob({
    id: newJobId('batch'),
    kind: BATCH_KIND,
    userId: principal.userId,
    apiKeyId: principal.keyId,
    model: null,
    input,
    maxRetries: 3,
  });
  record.routeNote(ctx.rec, `batch ${job.id} of ${total} requests queued`, true);
  kickJobs();
  sendJson(ctx, sink, await batchObject(job));
}

async function ownBatch(ctx: RequestContext, req: GatewayRequest): Promise<JobRow> {
  const principal = await caller(ctx, req);
  const id = segment(req);
  const job = /^batch_[0-9a-f]{48}$/.test(id) ? await getJob(id, principal.userId) : null;
  if (!job || job.kind !== BATCH_KIND) throw new GatewayError('not_found', `No batch found with id '${id}'.`, { param: 'batch_id' });
  return job;
}

/** GET /v1/batches/{id}. */
export async function getBatch(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  sendJson(ctx, sink, await batchObject(await ownBatch(ctx, req)));
}

/** POST /v1/batches/{id}/cancel: lines in flight finish (and are billed), no new line starts. */
export async function cancelBatch(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const job = await ownBatch(ctx, req);
  let after = (await requestCancel(job.id, job.userId)) ?? job;
  if (after.status === 'queued') {
    await endQueuedJob(after, 'cancelled', { code: 'cancelled', message: 'The batch was cancelled before it started.' });
    after = (await getJob(job.id, job.userId)) ?? after;
  }
  sendJson(ctx, sink, await batchObject(after));
}

/** GET /v1/batches. */
export async function listBatches(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(ctx, req);
  const q = new URLSearchParams(req.query ?? '');
  const limit = q.has('limit') ? Number(q.get('limit')) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('"limit" must be a whole number from 1 to 100.', 'limit');
  const rows = await listJobs(principal.userId, BATCH_KIND, { limit: limit + 1, after: q.get('after') ?? undefined });
  const data = await Promise.all(rows.slice(0, limit).map(batchObject));
  sendJson(ctx, sink, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit });
}

export const batchRoutes = {
  'POST /v1/files': createFile,
  'GET /v1/files': listFiles,
  'POST /v1/batches': createBatch,
  'GET /v1/batches': listBatches,
};
export const batchParamRoutes = {
  'GET /v1/files/{id}': getFile,
  'DELETE /v1/files/{id}': deleteFile,
  'GET /v1/files/{id}/content': getFileContent,
  'GET /v1/batches/{id}': getBatch,
  'POST /v1/batches/{id}/cancel': cancelBatch,
};
