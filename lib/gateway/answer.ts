// The answer to a /v1 request, after the relay: the usage settled once into the record (priced by
// settlement.ts), what the translator renders of it, the response headers, a stream's start and its
// end with the cost trailers, and an error in the client protocol's envelope. The pipeline hands the
// request here once the reply is known, so that the request's life reads in one direction: opened
// (context.ts), planned and admitted (pipeline.ts), sent upstream (call-channel.ts), answered here,
// finished (context.ts).
import { errorHeaders, GatewayError, toGatewayError } from '@/lib/errors';
import { noUsage, type Usage } from '@/lib/billing/cost';
import { providerHeader } from '@/lib/channels/labels';
import { CLAMPED_HEADER } from '@/lib/gateway/admission/clamp';
import { CACHE_HEADER } from '@/lib/gateway/response-cache';
import { log, errorFields } from '@/lib/log';
import { DROPPED_HEADER, droppedHeaderValue } from '@/lib/gateway/translate/dropped';
import type { Settlement, UpstreamUsage } from '@/lib/gateway/translate/types';
import type { ResponseSink } from '@/lib/gateway/types';
import { recheckKeyRefusal } from '@/lib/auth/admission';
import { getLimiter } from '@/lib/limits/runtime';
import { countTokens } from '@/lib/gateway/tokens';
import { allowedCalls, type BuiltInToolUse } from '@/lib/gateway/builtin-tools';
import { toolFee, type ToolCalls } from '@/lib/pricing/tools';
import { isModelName, type RequestContext } from '@/lib/gateway/context';
import * as record from '@/lib/gateway/record';
import { costTrailers, outputTokensOf, settleCharge, UNPRICED_HEADER, type ToolFee } from '@/lib/gateway/settlement';

/** What the answer reads of the request a surface prepared (pipeline.ts's `PreparedRequest`). */
export interface Prepared {
  /** Reserved and billed (false: count_tokens, admitted and logged but free). */
  billed: boolean;
  maxOutputTokens?: number;
  choices: number;
  builtInTools?: BuiltInToolUse[];
  /** Our count of the prompt, for a reply whose upstream reported no usage. */
  estimatePrompt(): Promise<number>;
  /** The surface's own stream error event, when not its protocol's. */
  streamError?(err: GatewayError): string;
  /** The content type of a stream, when not SSE. */
  streamContentType?: string;
}

/** The request's fields this module writes (their one writer): how its stream errors read, its cache price. */
type Answering = { -readonly [K in 'streamError' | 'cacheHitBilledNano']: RequestContext[K] };

/** The request is answered from the response cache, billed at `billedNano` of its price. */
export function fromCache(ctx: RequestContext, billedNano: bigint): void {
  (ctx as Answering).cacheHitBilledNano = billedNano;
}

/** What was generated, read only when tokens must be counted (a reply or stream translator, lazily), and the built-in tool calls made. */
export interface Generated {
  readonly completion: string;
  readonly toolCalls?: ToolCalls;
}

export const NOTHING_GENERATED: Generated = { completion: '' };

/** The fee of the built-in tool calls the reply reports, at most the calls reserved; none when the request asked for none. */
function toolFeeOf(ctx: RequestContext, prepared: Prepared, generated: Generated): ToolFee | undefined {
  const tools = prepared.builtInTools;
  const model = ctx.rec.model;
  if (!tools?.length || !generated.toolCalls || !model) return undefined;
  const fee = toolFee(model.toolPrices, generated.toolCalls, allowedCalls(tools));
  return { ...fee, reported: generated.toolCalls };
}

/**
 * Prices what the upstream reported (our tokenizer fills in what it did not) and records it on ctx;
 * answers the reasoning tokens reported. Synchronous when the upstream's count is final, as it
 * mostly is (no promise, no completion text); a promise when tokens must be counted.
 */
export function settle(ctx: RequestContext, prepared: Prepared, reported: UpstreamUsage | null, generated: Generated): number | Promise<number> {
  // The completion text on the request's span: only when the operator opted in (lib/telemetry/tracing.ts).
  if (ctx.trace?.captureContent) ctx.trace.completion(generated.completion);
  if (!prepared.billed) return 0;
  if (!reported || !reported.completionFinal) return settleCounted(ctx, prepared, reported, generated);
  charge(ctx, billedUsage(reported), outputTokensOf(ctx.rec.model!, prepared), toolFeeOf(ctx, prepared, generated));
  return reported.reasoningTokens;
}

/** An upstream's report as the usage billed: its totals and every share priced apart (not `completionFinal`). */
function billedUsage(reported: UpstreamUsage): Usage {
  const { completionFinal: _final, ...usage } = reported;
  return { ...usage, estimated: false };
}

async function settleCounted(ctx: RequestContext, prepared: Prepared, reported: UpstreamUsage | null, generated: Generated): Promise<number> {
  const completion = generated.completion;
  // Counting stops past what can be billed: a hostile upstream's megabytes are not tokenized.
  const maxCompletion = outputTokensOf(ctx.rec.model!, prepared);
  let usage: Usage;
  if (!reported) {
    usage = { ...noUsage(), promptTokens: await prepared.estimatePrompt(), completionTokens: await countTokens(completion, maxCompletion), estimated: true };
  } else {
    usage = billedUsage(reported);
    // A stream that broke before its final count: at least what we saw generated.
    const counted = await countTokens(completion, maxCompletion);
    if (counted > usage.completionTokens) {
      usage.completionTokens = counted;
      usage.estimated = true;
    }
  }
  charge(ctx, usage, maxCompletion, toolFeeOf(ctx, prepared, generated));
  return reported?.reasoningTokens ?? 0;
}

/** The request's charge, computed once (settlement.ts) and kept on its record. */
function charge(ctx: RequestContext, usage: Usage, maxCompletion: number, tools: ToolFee | undefined): void {
  const model = ctx.rec.model;
  record.settled(
    ctx.rec,
    settleCharge({
      requestId: ctx.rec.requestId,
      model,
      usage,
      maxCompletion,
      tools,
      reserved: ctx.gate.reserved,
      cacheHitBilledNano: ctx.cacheHitBilledNano,
      batchPercent: ctx.batch && model ? ctx.batch.discountPercent(model) : undefined,
      cnyRateNano: ctx.cfg.cnyRateNano,
    }),
  );
}

/** What the translator renders of the settlement: the reply's own usage and cost fields. */
export function settlement(ctx: RequestContext, reasoningTokens: number): Settlement {
  const rec = ctx.rec;
  const charged = rec.charge;
  return {
    // The shares as reported (each billed at most its total: lib/billing/cost.ts), the reasoning too.
    usage: { ...charged.usage, reasoningTokens },
    toolCalls: rec.attempts.at(-1)?.billing?.toolCalls,
    costUsd: charged.costUsd,
    costCny: charged.costCnyText,
    channel: rec.channel ?? 'none',
    latencyMs: record.elapsedMs(rec),
  };
}

/** x-request-id, rate-limit headers and the cost-transparency headers, then `extra`. */
export function responseHeaders(ctx: RequestContext, extra?: Record<string, string>): Record<string, string> {
  const rec = ctx.rec;
  const headers: Record<string, string> = { 'x-request-id': rec.requestId };
  const limits = ctx.gate.admission?.headers;
  if (limits) for (const name in limits) headers[name] = limits[name];
  const charge = rec.charge;
  headers['x-service-cost-usd'] = charge.costUsd;
  headers['x-service-cost-cny'] = charge.costCnyText;
  headers['x-service-model-id'] = rec.model?.name ?? (rec.modelRequested && isModelName(rec.modelRequested) ? rec.modelRequested : '');
  headers['x-service-latency-ms'] = String(record.elapsedMs(rec));
  headers['x-service-provider'] = rec.channel === null ? 'none' : providerHeader(rec.channel, ctx.cfg);
  if (rec.servedRegion !== null && rec.channel !== null) headers['x-service-region'] = rec.servedRegion;
  const dropped = droppedHeaderValue(rec.dropped);
  if (dropped) headers[DROPPED_HEADER] = dropped;
  ctx.protocol.addHeaders?.(headers, rec.requestId);
  if (rec.outputClamped !== null) headers[CLAMPED_HEADER] = String(rec.outputClamped);
  if (rec.cacheResult) headers[CACHE_HEADER] = rec.cacheResult;
  if (charge.unpricedText) headers[UNPRICED_HEADER] = charge.unpricedText;
  if (extra) for (const name in extra) headers[name] = extra[name];
  return headers;
}

/** A whole answer at once: `status`, the response headers with `extra`, `body`. */
export function answer(ctx: RequestContext, sink: ResponseSink, status: number, body: string, extra: Record<string, string>): void {
  sink.start(status, responseHeaders(ctx, extra));
  sink.end(body);
}

/**
 * Starts a stream: its first byte (the record's first token), its headers (its cost follows in
 * trailers), and how its errors read from here (the surface's own event, when it has one).
 */
export function startStream(ctx: RequestContext, sink: ResponseSink, prepared: Prepared): void {
  record.firstToken(ctx.rec);
  if (prepared.streamError) (ctx as Answering).streamError = prepared.streamError.bind(prepared);
  sink.start(
    200,
    responseHeaders(ctx, {
      'content-type': prepared.streamContentType ?? 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-service-cost-usd': 'pending',
      'x-service-cost-cny': 'pending',
      // x-service-unpriced only when the usage had classes without a price, x-service-error only when the stream ended in an error (its code).
      trailer: 'x-service-cost-usd, x-service-cost-cny, x-service-unpriced, x-service-error',
    }),
  );
}

/**
 * Ends a stream that completed, its cost final: writes `tail` with the cost trailers, after
 * settling the reservation and freeing the limits. That release leaves at once (urgent), before
 * the last bytes, instead of in the batch of the event-loop turn after the response ended: a
 * client that sends its next request as soon as a stream ends found this instance still busy
 * writing that release to Redis (docs/decisions/008-urgent-limiter-calls.md). Its concurrency slot is
 * also free before it sees the end.
 */
export function endStream(ctx: RequestContext, sink: ResponseSink, tail?: string): void {
  const charge = ctx.rec.charge;
  ctx.gate.release(charge.cost, charge.usage, ctx.cacheHitBilledNano !== null, true, ctx.rec.requestId);
  sink.end(tail, costTrailers(charge));
}

/** Answers an error in the client protocol's envelope (or, mid-stream, as its final error event). */
export async function fail(ctx: RequestContext, sink: ResponseSink, err: unknown): Promise<void> {
  const gwErr: GatewayError = await recheckKeyRefusal(ctx.principal, toGatewayError(err), (keys) => getLimiter().denied(keys)); // lib/keys
  if (gwErr.status >= 500 && gwErr.code === 'internal_error') {
    log('error', 'request failed', { requestId: ctx.rec.requestId, endpoint: ctx.rec.endpoint, ...errorFields(err) });
  }
  record.failed(ctx.rec, gwErr.code);
  if (!sink.started && ctx.principal && !ctx.batch && gwErr.status >= 400 && gwErr.status < 500) {
    // Refused before admission (bad body, unknown model): still counted against the account's
    // request rate, so that refused requests cannot be sent (and logged) without limit.
    const limited = await ctx.gate.countRefusal(ctx.principal, ctx.cfg, ctx.protocol.endpoint, ctx.rec.requestId);
    if (limited) return fail(ctx, sink, limited);
  }
  if (sink.started) {
    // The client already has a 200; the log keeps that status and says how the stream ended.
    await sink.write(ctx.streamError?.(gwErr) ?? ctx.protocol.streamErrorEvent(gwErr)).catch(() => undefined);
    // The trailers the stream announced: the cost so far (what is billed) and what ended it.
    sink.end(undefined, { ...costTrailers(ctx.rec.charge), 'x-service-error': gwErr.code });
    return;
  }
  record.failed(ctx.rec, gwErr.code, gwErr.status);
  answer(ctx, sink, gwErr.status, ctx.protocol.errorBody(gwErr), { 'content-type': 'application/json', ...errorHeaders(gwErr) });
}

/** The client left before anything was sent: recorded as client_closed (499), the response ended. */
export function clientLeft(ctx: RequestContext, sink: ResponseSink): void {
  record.clientClosed(ctx.rec);
  sink.end();
}
