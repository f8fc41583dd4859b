// A /v1 request in flight: its record (record.ts, the log row), the protocol its client speaks
// (surfaces/protocol.ts), its places in the limits (gate.ts), and the caller once authenticated.
// The functions here open a request and finish it; the attempts upstream are callChannel()'s
// (call-channel.ts), its answer (charge, headers, stream, errors) answer.ts's.
import type { GatewayConfig, ModelInfo } from '@/lib/config';
import { authenticate, type Principal } from '@/lib/auth/principal';
import { GatewayError } from '@/lib/errors';
import { readJsonBody, type JsonBody } from '@/lib/gateway/body';
import { enqueueLog, logQueueFull, storableText } from '@/lib/billing/writer';
import { inc, observe } from '@/lib/metrics';
import { checkDenied } from '@/lib/gateway/admission';
import type { GatewayRequest } from '@/lib/gateway/types';
import { checkKeyAccess, keyClientIp } from '@/lib/keys/access';
import type { RequestTrace } from '@/lib/telemetry/tracing';
import { observeGenAi } from '@/lib/telemetry/genai-metrics';
import { AdmissionGate } from '@/lib/gateway/gate';
import { askedFor, elapsedMs, newRecord, type RequestRecord } from '@/lib/gateway/record';
import type { ClientProtocol } from '@/lib/gateway/surfaces/protocol';

/** Longest model name accepted (catalogue names are far shorter). */
export const MAX_MODEL_NAME = 256;
const MODEL_NAME = /^[\x21-\x7e][\x20-\x7e]*$/;

/** A string that can be a model name: printable ASCII (so it is also a valid header value), bounded. */
export function isModelName(s: string): boolean {
  return s.length <= MAX_MODEL_NAME && MODEL_NAME.test(s);
}

/**
 * A line of a batch (lib/batches): its request id and time are fixed by the batch and line (a line
 * run again after a takeover writes the same log row: logged and billed once), and its prices are
 * lowered by the model's batch discount (percent).
 */
export interface BatchLine {
  requestId: string;
  startedAt: number;
  discountPercent(model: ModelInfo): number;
}

export interface RequestContext {
  readonly rec: RequestRecord;
  readonly cfg: GatewayConfig;
  readonly protocol: ClientProtocol;
  readonly gate: AdmissionGate;
  readonly batch?: BatchLine;
  /** The request's spans, when tracing is on (lib/telemetry/tracing.ts). */
  readonly trace?: RequestTrace;
  /** The caller, once authenticated (`open`, `authorize`). */
  readonly principal?: Principal;
  /** The client address the key's ranges are checked against (lib/keys/access.ts). */
  readonly keyIp: string;
  /** Shed at the log queue's bound: no log row. */
  readonly unlogged: boolean;
  /** Answered from the response cache at this fraction of its price (billionths); no upstream tokens counted. Written by answer.ts. */
  readonly cacheHitBilledNano: bigint | null;
  /** A stream error in the surface's own event format for this request (the Responses API's `error` event). Written by answer.ts when the stream starts. */
  readonly streamError?: (err: GatewayError) => string;
  finished: boolean;
}

type Mutable = { -readonly [K in keyof RequestContext]: RequestContext[K] };

export function newContext(protocol: ClientProtocol, endpoint: string, cfg: GatewayConfig, trace?: RequestTrace, batch?: BatchLine): RequestContext {
  const rec = newRecord(protocol.name, endpoint, batch);
  return {
    rec,
    cfg,
    protocol,
    gate: new AdmissionGate(rec.requestId, batch !== undefined, batch !== undefined),
    batch,
    trace,
    principal: undefined,
    keyIp: '',
    unlogged: false,
    cacheHitBilledNano: null,
    finished: false,
  };
}

/** The key's expiry and address ranges, as every /v1 route checks them (lib/keys/access.ts); the caller is the request's from here. */
export function checkKey(ctx: RequestContext, principal: Principal, req: GatewayRequest): void {
  const m = ctx as Mutable;
  checkKeyAccess(principal.guard, (m.keyIp = keyClientIp(req)));
  m.principal = principal;
}

/**
 * The door of every /v1 route: authenticates, checks the key, honours the maintenance switch, and
 * refuses while requests cannot be recorded. Returns the caller.
 */
export async function authorize(ctx: RequestContext, req: GatewayRequest): Promise<Principal> {
  const principal = await authenticate(req);
  checkKey(ctx, principal, req);
  if (ctx.cfg.maintenance) throw new GatewayError('maintenance', 'The gateway is under maintenance. Please retry shortly.', { retryAfterMs: 30_000 });
  // Every request ends in a log row and maybe a charge: with the write-behind queue at its bound
  // (the database unwritable for long), a request is refused rather than served unbilled.
  if (logQueueFull()) {
    (ctx as Mutable).unlogged = true; // a row for the refusal would grow the queue past its bound
    throw new GatewayError('unavailable', 'The gateway cannot record requests right now. Please retry shortly.', { retryAfterMs: 5000 });
  }
  return principal;
}

/**
 * The door of a route that admits nothing (a read of the store): `authorize`, the deny markers
 * read, and the request counted against the account's request rate (each reads the database).
 */
export async function authorizeRead(ctx: RequestContext, req: GatewayRequest): Promise<Principal> {
  const principal = await authorize(ctx, req);
  await checkDenied(principal);
  const limited = await ctx.gate.countRefusal(principal, ctx.cfg, ctx.protocol.endpoint, ctx.rec.requestId);
  if (limited) throw limited;
  return principal;
}

/** `authorize`, then reads the JSON body once. */
export async function open(ctx: RequestContext, req: GatewayRequest): Promise<JsonBody> {
  await authorize(ctx, req);
  const body = await readJsonBody(req, ctx.cfg.limits.max_body_bytes);
  if (ctx.trace?.captureContent) ctx.trace.input(body.json);
  const model = body.json.model;
  if (typeof model === 'string' && model !== '') {
    // A model name is an identifier: refused at once if it could not be one (megabytes of it would
    // be stored in every log row and echoed in a header; NUL or a lone surrogate cannot be stored).
    if (!isModelName(model)) {
      askedFor(ctx.rec, storableText(model, 64));
      throw new GatewayError('model_not_found', `"model" must be a model name of at most ${MAX_MODEL_NAME} printable characters.`, {
        param: 'model',
        status: ctx.protocol.modelNotFoundStatus,
      });
    }
    askedFor(ctx.rec, model);
  }
  return body;
}

/** The client left before an answer: thrown to end the pipeline (the handler records it: record.clientClosed). */
export function clientGone(): GatewayError {
  return new GatewayError('invalid_request', 'Client closed the request.', { status: 499 });
}

/** Releases limits, settles the reservation and queues the log row: the request's end, over its record. Idempotent. */
export async function finish(ctx: RequestContext): Promise<void> {
  if (ctx.finished) return;
  ctx.finished = true;
  const rec = ctx.rec;
  const charge = rec.charge;
  const latency = elapsedMs(rec);
  inc('gateway_requests_total', { endpoint: rec.endpoint, status: String(rec.status) });
  observe('gateway_request_duration_ms', { endpoint: rec.endpoint }, latency);
  if (charge.cost > 0n) inc('gateway_cost_usd_pico_total', { endpoint: rec.endpoint }, Number(charge.cost));
  // A speculative admission the pipeline never waited for (the client left first): settle it.
  await ctx.gate.settled();
  const released = ctx.gate.release(charge.cost, charge.usage, ctx.cacheHitBilledNano !== null, false, rec.requestId);
  if (released) await released;
  observeGenAi(rec, latency);
  if (!ctx.principal || ctx.unlogged) return;
  const logged = ctx.trace?.logWrite();
  const u = charge.usage;
  enqueueLog({
    id: rec.requestId,
    createdAt: new Date(rec.startedAt),
    userId: ctx.principal.userId,
    apiKeyId: ctx.principal.keyId,
    endpoint: rec.endpoint,
    modelRequested: rec.modelRequested,
    modelServed: rec.model?.name ?? null,
    channel: rec.channel,
    attempts: rec.attempts,
    status: rec.status,
    outcome: rec.outcome,
    stream: rec.stream,
    promptTokens: u.promptTokens,
    completionTokens: u.completionTokens,
    cacheReadTokens: u.cacheReadTokens,
    cacheWriteTokens: u.cacheWriteTokens,
    tokensEstimated: u.estimated,
    costPico: charge.cost,
    costCnyPico: charge.costCny,
    cnyRate: ctx.cfg.usdToCny,
    priceBreakdown: charge.breakdown,
    latencyMs: latency,
    firstTokenMs: rec.firstTokenMs,
    errorCode: rec.errorCode,
    routeReason: rec.routeReason,
    region: rec.channel === null ? null : rec.servedRegion,
    billedTo: ctx.gate.admission?.plan ? 'plan' : null,
    projectId: ctx.principal.projectId,
    memberId: ctx.principal.memberId,
  });
  logged?.();
}
