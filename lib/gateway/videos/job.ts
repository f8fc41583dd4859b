// A video generation as a job (lib/gateway/jobs): created on an OpenAI-protocol channel with OpenAI's
// video API (POST {base}/videos), polled (GET {base}/videos/{id}) and its file downloaded
// (GET {base}/videos/{id}/content) into the operator's video storage, then settled: the seconds
// generated at the model's price per second, or nothing (the reservation refunded) when it fails
// or is cancelled. The upstream's video id is checkpointed at once: an instance that takes the job
// over polls that video instead of creating another; a creation whose id was not saved (a kill in
// between) is sent again with the same idempotency key, so the upstream answers the same video.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { getConfig, type ChannelInfo, type ModelInfo } from '@/lib/config';
import { providers } from '@/lib/gateway/providers';
import { redactUpstreamText } from '@/lib/gateway/upstream';
import { inRegion } from '@/lib/region';
import { env } from '@/lib/env';
import { JobFailure, RetryableJobError, registerJobHandler, type JobHandler, type JobOutcome, type JobRun } from '@/lib/gateway/jobs/engine';
import { renewJobLease, settleJob, type JobLease } from '@/lib/gateway/jobs/settle';
import { deleteExpired, expiredJobs, type JobRow } from '@/lib/gateway/jobs/store';
import { videoStorage } from '@/lib/gateway/videos/storage';
import { VIDEO_SECONDS, type StoredBreakdown } from '@/lib/pricing/breakdown';

export const VIDEO_KIND = 'video';

export interface VideoInput {
  model: string;
  prompt: string;
  seconds: number;
  size: string;
  input_reference?: string;
  /** The region it must be generated in (x-service-region, service.region or a pin); absent: anywhere. */
  region?: string;
  lease?: JobLease;
}

export interface VideoState {
  upstreamId?: string;
  /** The channel a creation was sent to, saved before the call (its id may not have been saved: a kill). */
  creatingOn?: string;
  channel?: string;
  /** The upstream's own status while polled. */
  upstreamStatus?: string;
  stored?: { key: string; bytes: number };
}

export const videoKey = (jobId: string) => `${jobId}.mp4`;

/** The OpenAI-protocol channels of the model, of the job's region only when it has one. */
export function videoChannels(model: ModelInfo, region: string | null | undefined): ChannelInfo[] {
  return inRegion(getConfig().channelsByModel.get(model.name) ?? [], region ?? null).filter((c) => c.protocol === 'openai');
}

function headersOf(channel: ChannelInfo): Record<string, string> {
  return providers.openai.auth(channel.apiKey);
}

async function call(channel: ChannelInfo, method: 'GET', path: string, signal: AbortSignal) {
  const timeout = AbortSignal.timeout(channel.timeouts.firstByteMs + channel.timeouts.connectMs);
  return request(`${channel.baseUrl}${path}`, {
    method,
    headers: headersOf(channel),
    signal: AbortSignal.any([signal, timeout]),
    headersTimeout: channel.timeouts.firstByteMs,
    bodyTimeout: channel.timeouts.idleMs,
  });
}

async function json(res: Awaited<ReturnType<typeof request>>): Promise<Record<string, unknown>> {
  const text = await res.body.text();
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return { raw: text.slice(0, 500) };
  }
}

function upstreamMessage(body: Record<string, unknown>, channel: ChannelInfo): string {
  const err = body.error as { message?: unknown } | undefined;
  const msg = typeof err?.message === 'string' ? err.message : typeof body.raw === 'string' ? body.raw : 'no reason given';
  return redactUpstreamText(msg.slice(0, 500), channel);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

class Stopped extends Error {}

function checkStopped(run: JobRun): void {
  if (run.signal.aborted) throw run.stopReason() === 'cancelled' ? new JobFailure('cancelled', 'The video generation was cancelled.') : new Stopped('stopped');
}

/** No channel of the job's region left (the operator's config changed): retried, then failed, never sent elsewhere. */
const regionUnavailableJob = (region: string, model: ModelInfo) =>
  new RetryableJobError('region_unavailable', `No channel in region "${region}" can generate videos with ${model.name}; it was not sent to another region.`);

/** The Idempotency-Key of a job's creation upstream: the same on every try and every instance. */
export const videoIdempotencyKey = (jobId: string) => `gw-${jobId}`;

/**
 * Creates the video on the first channel that takes it. Each try sends the job's idempotency key,
 * and the channel is checkpointed before the call (`creatingOn`): an instance that takes over a job
 * killed between the upstream's creation and the checkpoint of its id tries that channel first with
 * the same key, and an upstream that honours it (OpenAI's does) answers the video it already made.
 */
async function create(run: JobRun, input: VideoInput, model: ModelInfo, state: VideoState): Promise<{ id: string; channel: ChannelInfo }> {
  // Multipart, as OpenAI's API takes it (and its SDKs send it): the reference image as a file.
  const form = () => {
    const f = new FormData();
    f.set('model', model.name);
    f.set('prompt', input.prompt);
    f.set('seconds', String(input.seconds));
    f.set('size', input.size);
    const ref = input.input_reference && /^data:(image\/[a-z]+);base64,(.*)$/s.exec(input.input_reference);
    if (ref) f.set('input_reference', new Blob([Buffer.from(ref[2], 'base64')], { type: ref[1] }), `reference.${ref[1].slice(6)}`);
    return f;
  };
  let last = 'no OpenAI-protocol channel serves this model';
  const channels = videoChannels(model, input.region);
  if (channels.length === 0 && input.region) throw regionUnavailableJob(input.region, model);
  const tried = channels.findIndex((c) => c.name === state.creatingOn);
  if (tried > 0) channels.unshift(...channels.splice(tried, 1));
  for (const channel of channels) {
    checkStopped(run);
    if (state.creatingOn !== channel.name) {
      state.creatingOn = channel.name;
      await run.checkpoint({ state: state as Record<string, unknown> });
    }
    try {
      const timeout = AbortSignal.timeout(channel.timeouts.firstByteMs + channel.timeouts.connectMs);
      const res = await fetch(`${channel.baseUrl}/videos`, {
        method: 'POST',
        headers: { ...headersOf(channel), 'idempotency-key': videoIdempotencyKey(run.job.id) },
        body: form(),
        signal: AbortSignal.any([run.signal, timeout]),
      });
      const text = await res.text();
      let out: Record<string, unknown>;
      try {
        out = JSON.parse(text) as Record<string, unknown>;
      } catch {
        out = { raw: text.slice(0, 500) };
      }
      if (res.status < 300 && typeof out.id === 'string') return { id: out.id, channel };
      const message = upstreamMessage(out, channel);
      if (res.status >= 400 && res.status < 500 && ![401, 403, 408, 429].includes(res.status))
        throw new JobFailure('upstream_rejected', `The upstream refused the video: ${message}`);
      last = `upstream answered ${res.status}`;
    } catch (err) {
      if (err instanceof JobFailure) throw err;
      checkStopped(run);
      last = (err as Error).message;
    }
  }
  throw new RetryableJobError('all_channels_failed', `No channel could start the video (${last}).`);
}

export const videoHandler: JobHandler = {
  kind: VIDEO_KIND,
  event: 'video',
  sweep: sweepVideos,

  async run(run: JobRun): Promise<JobOutcome> {
    const cfg = getConfig();
    const job = run.job;
    const input = job.input as unknown as VideoInput;
    const state = { ...(job.state as VideoState) };
    const model = cfg.models.get(input.model);
    if (!model || model.kind !== 'video') throw new JobFailure('model_not_found', `The model ${input.model} is no longer configured for video.`);
    checkStopped(run);
    if (input.lease) await renewJobLease(job.userId, input.lease);
    if (!state.upstreamId) {
      const made = await create(run, input, model, state);
      state.upstreamId = made.id;
      state.channel = made.channel.name;
      state.upstreamStatus = 'queued';
      await run.checkpoint({ state: state as Record<string, unknown>, progress: 0 });
    }
    const channel = videoChannels(model, input.region).find((c) => c.name === state.channel);
    if (!channel) throw new RetryableJobError('channel_gone', `The channel that generates this video (${state.channel}) is no longer configured.`);
    // Poll until the upstream is done.
    let errors = 0;
    let seconds = input.seconds;
    while (!state.stored) {
      checkStopped(run);
      let out: Record<string, unknown>;
      let status: number;
      try {
        const res = await call(channel, 'GET', `/videos/${encodeURIComponent(state.upstreamId)}`, run.signal);
        status = res.statusCode;
        out = await json(res);
      } catch (err) {
        checkStopped(run);
        if (++errors >= 10) throw new RetryableJobError('upstream_unreachable', `The upstream could not be polled: ${(err as Error).message}`);
        await sleep(env.VIDEO_POLL_MS, run.signal);
        continue;
      }
      if (status === 404) throw new JobFailure('upstream_lost', 'The upstream no longer knows this video.');
      if (status >= 300) {
        if (++errors >= 10) throw new RetryableJobError('upstream_error', `The upstream answered ${status} when polled.`);
        await sleep(env.VIDEO_POLL_MS, run.signal);
        continue;
      }
      errors = 0;
      const upstreamStatus = String(out.status ?? '');
      if (upstreamStatus === 'failed') {
        const err = out.error as { message?: unknown } | undefined;
        const msg = typeof err?.message === 'string' ? redactUpstreamText(err.message.slice(0, 500), channel) : 'no reason given';
        throw new JobFailure('video_generation_failed', `The video could not be generated: ${msg}`);
      }
      const reported = Number(out.seconds);
      if (Number.isFinite(reported) && reported > 0) seconds = Math.min(input.seconds, reported);
      if (upstreamStatus === 'completed') {
        const res = await call(channel, 'GET', `/videos/${encodeURIComponent(state.upstreamId)}/content`, run.signal);
        if (res.statusCode >= 300) {
          await res.body.dump().catch(() => undefined);
          throw new RetryableJobError('upstream_error', `The upstream answered ${res.statusCode} for the video's content.`);
        }
        const key = videoKey(job.id);
        const bytes = await videoStorage(cfg).put(key, Readable.from(res.body));
        state.stored = { key, bytes };
        state.upstreamStatus = 'completed';
        await run.checkpoint({ state: state as Record<string, unknown>, progress: 99 });
        break;
      }
      const progress = Math.max(0, Math.min(99, Math.round(Number(out.progress) || 0)));
      if (upstreamStatus !== state.upstreamStatus || progress !== job.progress) {
        state.upstreamStatus = upstreamStatus;
        await run.checkpoint({ state: state as Record<string, unknown>, progress });
      }
      if (input.lease) await renewJobLease(job.userId, input.lease);
      await sleep(env.VIDEO_POLL_MS, run.signal);
    }
    const cost = model.videoPricePerSecond! * BigInt(seconds);
    // A video is priced per second, not per token: its one line is a per-use line (`k`) whose unit
    // the log detail names as seconds (components/dashboard/price-breakdown.tsx).
    const priceBreakdown: StoredBreakdown = { t: 'base', l: [], k: [[VIDEO_SECONDS, seconds, model.videoPricePerSecond!.toString(), cost.toString()]] };
    await settleJob(
      {
        id: job.id,
        createdAt: job.createdAt,
        userId: job.userId,
        apiKeyId: job.apiKeyId,
        endpoint: '/v1/videos',
        model: model.name,
        channel: channel.name,
        region: channel.region ?? null,
        status: 200,
        outcome: 'ok',
        errorCode: null,
        cost,
        latencyMs: Date.now() - job.createdAt.getTime(),
        routeReason: `video job: ${seconds} s at ${model.name}'s price per second`,
        priceBreakdown,
      },
      input.lease,
    );
    return {
      status: 'succeeded',
      result: { seconds, bytes: state.stored!.bytes, cost_usd: cost.toString() },
      expiresAt: new Date(Date.now() + cfg.videos.retention_days * 86_400_000),
    };
  },

  async abandon(job: JobRow, status, error): Promise<JobOutcome> {
    const input = job.input as unknown as VideoInput;
    const state = job.state as VideoState;
    await settleJob(
      {
        id: job.id,
        createdAt: job.createdAt,
        userId: job.userId,
        apiKeyId: job.apiKeyId,
        endpoint: '/v1/videos',
        model: input.model,
        channel: state.channel ?? null,
        status: status === 'cancelled' ? 499 : 502,
        outcome: status === 'cancelled' ? 'client_closed' : 'error',
        errorCode: error.code,
        cost: 0n,
        latencyMs: Date.now() - job.createdAt.getTime(),
        routeReason: `video job ${status}: ${error.message}`.slice(0, 500),
      },
      input.lease,
    );
    return { status, error, expiresAt: new Date(Date.now() + getConfig().videos.retention_days * 86_400_000) };
  },
};

/** Deletes videos past their retention: the file, then the job. */
async function sweepVideos(): Promise<void> {
  const storage = videoStorage(getConfig());
  for (const { id } of await expiredJobs(VIDEO_KIND)) {
    await storage.remove(videoKey(id));
    await deleteExpired(id);
  }
}

export function registerVideoJobs(): void {
  registerJobHandler(videoHandler);
}
