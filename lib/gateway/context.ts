import { randomBytes } from 'node:crypto';
import { CLAMPED_HEADER } from '@/lib/gateway/admission/clamp';
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import { authenticate, type Principal } from '@/lib/auth/principal';
import { anthropicErrorBody, errorHeaders, GatewayError, openaiErrorBody, toGatewayError } from '@/lib/errors';
import { readJsonBody, type JsonBody } from '@/lib/gateway/body';
import { recordChannelResult } from '@/lib/gateway/router';
import { chargeBoundOf, costOf, cnyOf, noUsage, type Usage } from '@/lib/billing/cost';
import { formatPico } from '@/lib/billing/money';
import { enqueueLog, logQueueFull, storableText } from '@/lib/billing/writer';
import { inc, observe } from '@/lib/metrics';
import { log, errorFields } from '@/lib/log';
import { countRefused, release, startAdmission, type Admission, type Endpoint } from '@/lib/gateway/admission';
import { LinkedSignal } from '@/lib/gateway/signal';
import { callUpstream, discard, type CallOptions, type UpstreamResponse } from '@/lib/gateway/upstream';
import type { UpstreamCall } from '@/lib/gateway/translate/types';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { checkKeyAccess, keyClientIp } from '@/lib/keys/access';
import { recheckKeyRefusal } from '@/lib/keys/admission';
import { getLimiter } from '@/lib/gateway/runtime';

export type Surface = 'openai' | 'anthropic';

/** Longest model name accepted (catalogue names are far shorter). */
export const MAX_MODEL_NAME = 256;
const MODEL_NAME = /^[\x21-\x7e][\x20-\x7e]*$/;

/** A string that can be a model name: printable ASCII (so it is also a valid header value), bounded. */
export function isModelName(s: string): boolean {
  return s.length <= MAX_MODEL_NAME && MODEL_NAME.test(s);
}

/**
 * Upstream statuses that are the channel's failure (fallback follows), not the caller's. A 403 is
 * the caller's when the caller shaped the request's access (`forbiddenIsCallers`: the mirror
 * forwards the caller's `anthropic-beta`, which the operator's key may not be entitled to); else it
 * is the channel key's, like a 401.
 */
export function channelFault(status: number, forbiddenIsCallers = false): boolean {
  return status === 401 || (status === 403 && !forbiddenIsCallers) || status === 429 || status >= 500;
}

// Detached once the headers are in: a reply is read on after its client left, to bill what was generated.
const DETACHED: CallOptions = { detachOnHeaders: true };

function endpointOf(path: string): Endpoint {
  if (path.startsWith('/v1/anthropic')) return 'anthropic';
  return path === '/v1/embeddings' ? 'embeddings' : 'chat';
}

export interface Attempt {
  channel: string;
  model: string;
  ok: boolean;
  status?: number;
  error?: string;
  ms: number;
}

/** One upstream try: its log record, the per-channel metrics and the circuit breaker, kept together. */
export class AttemptTracker {
  readonly record: Attempt;
  private readonly started = performance.now();

  constructor(
    private readonly channel: ChannelInfo,
    model: ModelInfo,
    private readonly cfg: GatewayConfig,
  ) {
    this.record = { channel: channel.name, model: model.name, ok: false, ms: 0 };
    inc('gateway_upstream_attempts_total', { channel: channel.name });
  }

  /** The channel failed (fallback may follow); always answers false for `return tracker.fail(...)`. */
  fail(message: string, status?: number): false {
    this.record.error = message;
    if (status !== undefined) this.record.status = status;
    this.finish(false);
    inc('gateway_upstream_failures_total', { channel: this.channel.name });
    return false;
  }

  /** The call was cancelled by us (its admission was refused): not the channel's failure. */
  cancel(message: string): void {
    this.record.error = message;
    this.record.ms = Math.round(performance.now() - this.started);
  }

  /** The channel answered; `ok` is whether the reply itself succeeded. */
  finish(healthy: boolean, ok = healthy): void {
    this.record.ms = Math.round(performance.now() - this.started);
    this.record.ok = ok;
    recordChannelResult(this.channel.name, healthy, this.cfg);
  }
}

/** Everything one request accumulates on its way through the pipeline, and its ending. */
// Request ids: a random per-process prefix (64 bits) and a counter; unique across instances and
// restarts without spending a CSPRNG call per request. They are identifiers, not secrets.
const ID_PREFIX = randomBytes(8).toString('hex');
let idSeq = 0;

export class RequestContext {
  readonly requestId = `req_${ID_PREFIX}${(idSeq++).toString(36).padStart(8, '0')}`;
  readonly startedAt = Date.now();
  private readonly t0 = performance.now();
  principal?: Principal;
  /** The client address the key's ranges are checked against (lib/keys/access.ts). */
  keyIp = '';
  admission?: Admission;
  /** A speculative admission still on its way (the upstream call went out without waiting). */
  private admitting?: Promise<Admission>;
  /** The release of `admission`, once sent (endStream or finish). */
  private released?: Promise<void>;
  model?: ModelInfo;
  modelRequested: string | null = null;
  channel: string | null = null;
  attempts: Attempt[] = [];
  routeReason: string | null = null;
  /** The output cap a request was lowered to, to fit its key budget or balance (admission/clamp.ts). */
  outputClamped: number | null = null;
  stream = false;
  firstTokenMs: number | null = null;
  usage: Usage = noUsage();
  cost = 0n;
  status = 200;
  outcome = 'ok';
  errorCode: string | null = null;
  private finished = false;
  /** The balance reservation of the admission. */
  private reserved: bigint | null = null;
  /** Completions asked for (`n`): the charge bound scales with it. */
  choices = 1;
  private admissionTried = false;
  /** Shed at the log queue's bound: no log row. */
  private unlogged = false;
  /** A stream error in the surface's own event format, when it is not chat chunks (the Responses API's `error` event). */
  streamError?: (err: GatewayError) => string;

  constructor(
    readonly surface: Surface,
    readonly endpoint: string,
    readonly cfg: GatewayConfig,
  ) {}

  /** Authenticates, honours the maintenance switch and reads the JSON body once. */
  async open(req: GatewayRequest): Promise<JsonBody> {
    this.principal = await authenticate(req.headers);
    checkKeyAccess(this.principal.guard, (this.keyIp = keyClientIp(req))); // the key's expiry and address ranges
    if (this.cfg.maintenance) throw new GatewayError('maintenance', 'The gateway is under maintenance. Please retry shortly.', { retryAfterMs: 30_000 });
    // Every request ends in a log row and maybe a charge: with the write-behind queue at its bound
    // (the database unwritable for long), a request is refused rather than served unbilled.
    if (logQueueFull()) {
      this.unlogged = true; // a row for the refusal would grow the queue past its bound
      throw new GatewayError('unavailable', 'The gateway cannot record requests right now. Please retry shortly.', { retryAfterMs: 5000 });
    }
    const body = await readJsonBody(req, this.cfg.limits.max_body_bytes);
    const model = body.json.model;
    if (typeof model === 'string' && model !== '') {
      // A model name is an identifier: refused at once if it could not be one (megabytes of it would
      // be stored in every log row and echoed in a header; NUL or a lone surrogate cannot be stored).
      if (!isModelName(model)) {
        this.modelRequested = storableText(model, 64);
        throw new GatewayError('model_not_found', `"model" must be a model name of at most ${MAX_MODEL_NAME} printable characters.`, {
          param: 'model',
          // As for any unknown model on the mirror: Anthropic answers 404 not_found_error.
          status: this.surface === 'anthropic' ? 404 : undefined,
        });
      }
      this.modelRequested = model;
    }
    return body;
  }

  /**
   * Admits the request (limits + balance reservation). Returns at once when the account has ample
   * room (speculative: the upstream may be called now, `confirmAdmission` gates the answer),
   * else once admitted; throws the refusal.
   */
  async admit(model: ModelInfo | null, endpoint: Endpoint, reserve: bigint): Promise<void> {
    this.reserved = reserve;
    this.admissionTried = true;
    const pending = startAdmission(
      { principal: this.principal!, cfg: this.cfg, model, endpoint, reserve, leaseId: this.requestId, ip: this.keyIp },
      this.stream,
    );
    if (!pending.speculative) {
      this.admission = await pending.admission;
      return;
    }
    this.admitting = pending.admission;
    pending.admission.then(
      (a) => {
        this.admission = a;
      },
      () => undefined,
    );
  }

  /**
   * Makes the upstream call of one attempt. While the admission is speculative, the call gets a
   * signal that also fires if the admission is refused (cancelling it at once), and its reply is
   * returned only once the request is admitted. Returns null when the call failed (recorded on the
   * tracker: the next channel may be tried); throws when the client left or the admission was refused.
   */
  private async callUpstream(
    req: GatewayRequest,
    tracker: AttemptTracker,
    channel: ChannelInfo,
    path: string,
    body: string | Buffer,
    headers: Record<string, string>,
  ): Promise<UpstreamResponse | null> {
    let signal = req.signal;
    if (this.admitting && !this.admission) {
      const linked = new LinkedSignal(req.signal);
      this.admitting.catch(() => linked.abort());
      signal = linked;
    }
    let res: UpstreamResponse;
    try {
      res = await callUpstream(channel, path, body, headers, signal, DETACHED);
    } catch (err) {
      if (req.signal.aborted) throw this.clientGone();
      await this.confirmAdmission(tracker);
      tracker.fail((err as Error).message);
      return null;
    }
    await this.confirmAdmission(tracker, res);
    return res;
  }

  /**
   * Waits for a speculative admission before anything of the upstream's reply is used. If it was
   * refused, the upstream reply (when there is one) is dropped and the refusal thrown: the
   * client gets the same 429/402 as without speculation, and nothing is billed.
   */
  private async confirmAdmission(tracker: AttemptTracker, res?: UpstreamResponse): Promise<void> {
    if (!this.admitting || this.admission) return;
    try {
      this.admission = await this.admitting;
    } catch (err) {
      res?.body.destroy();
      tracker.cancel('cancelled: admission refused');
      throw err;
    }
  }

  /** The client left before an answer: recorded as client_closed (499), thrown to end the pipeline. */
  clientGone(): GatewayError {
    this.outcome = 'client_closed';
    this.status = 499;
    return new GatewayError('invalid_request', 'Client closed the request.', { status: 499 });
  }

  beginAttempt(channel: ChannelInfo, model: ModelInfo): AttemptTracker {
    const tracker = new AttemptTracker(channel, model, this.cfg);
    this.attempts.push(tracker.record);
    return tracker;
  }

  /**
   * One upstream try on `channel`, up to its reply's status: the call of `upstream` at `path` (gated
   * by a speculative admission, see `callUpstream`) and the channel's own failures (unreachable, 429
   * or 5xx: the body is let go and the failure recorded). Returns the reply with its tracker, or null
   * when the next channel should be tried; throws when the client left or the admission was refused.
   */
  async tryChannel(
    req: GatewayRequest,
    channel: ChannelInfo,
    model: ModelInfo,
    path: string,
    upstream: UpstreamCall,
    headers: Record<string, string>,
  ): Promise<{ res: UpstreamResponse; tracker: AttemptTracker } | null> {
    const tracker = this.beginAttempt(channel, model);
    if (req.signal.aborted) throw this.clientGone();
    const res = await this.callUpstream(req, tracker, channel, path, upstream.body, headers);
    if (!res) return null;
    tracker.record.status = res.status;
    // 401/403: the channel's own key was refused (revoked, out of credit): the channel's failure,
    // never the caller's; the next channel is tried and the breaker counts it.
    if (channelFault(res.status, upstream.forbiddenIsCallers)) {
      discard(res.body);
      tracker.fail(`upstream answered ${res.status}`, res.status);
      return null;
    }
    return { res, tracker };
  }

  elapsedMs(): number {
    return Math.round(performance.now() - this.t0);
  }

  markFirstToken(): void {
    if (this.firstTokenMs === null) this.firstTokenMs = this.elapsedMs();
  }

  /**
   * Prices the usage with the model that actually served. The charge may exceed the reservation
   * (prompt media fetched by URL count more tokens than the body's size suggests), counted in
   * /metrics, but never the request's charge bound (chargeBoundOf: the model's whole context window
   * at its highest price, per choice): a usage report beyond that is not believed, and it bounds how
   * far concurrent requests can take a balance below zero.
   */
  settleCost(usage: Usage): bigint {
    this.usage = usage;
    let cost = this.model ? costOf(this.model, usage) : 0n;
    if (this.reserved !== null && cost > this.reserved && this.model) {
      inc('gateway_cost_over_reservation_total', { model: this.model.name });
      const bound = chargeBoundOf(this.model, this.choices);
      const cap = bound > this.reserved ? bound : this.reserved;
      if (cost > cap) {
        log('warn', 'usage beyond the charge bound; charged the bound', {
          requestId: this.requestId,
          model: this.model.name,
          costUsd: formatPico(cost),
          boundUsd: formatPico(cap),
        });
        cost = cap;
      }
    }
    this.cost = cost;
    return this.cost;
  }

  /**
   * Ends a stream that completed, its cost final: writes `tail` with the cost trailers, after
   * settling the reservation and freeing the limits. That release leaves at once (urgent), before
   * the last bytes, instead of in the batch of the event-loop turn after the response ended: a
   * client that sends its next request as soon as a stream ends found this instance still busy
   * writing that release to Redis (docs/decisions/008-urgent-limiter-calls.md). Its concurrency slot is
   * also free before it sees the end.
   */
  endStream(sink: ResponseSink, tail?: string): void {
    if (this.admission) void this.releaseOnce(true);
    sink.end(tail, { 'x-service-cost-usd': this.costUsdText(), 'x-service-cost-cny': this.costCnyText() });
  }

  /** Sends the release of `admission` (once: later calls return the first one's promise). */
  private releaseOnce(urgent: boolean): Promise<void> {
    const u = this.usage;
    return (this.released ??= release(this.admission!, this.cost, u.promptTokens + u.completionTokens + u.cacheReadTokens + u.cacheWriteTokens, urgent));
  }

  // The cost in CNY and the decimal texts of both, computed once per cost (headers, the reply's
  // own cost fields, trailers and the log row all ask for them).
  private cnyFor = -1n;
  private cny = 0n;
  private usdTextFor = -1n;
  private usdText = '';
  private cnyTextFor = -1n;
  private cnyText = '';

  costCny(): bigint {
    if (this.cnyFor !== this.cost) {
      this.cny = cnyOf(this.cost, this.cfg.cnyRateNano);
      this.cnyFor = this.cost;
    }
    return this.cny;
  }

  /** The cost in USD as exact decimal text. */
  costUsdText(): string {
    if (this.usdTextFor !== this.cost) {
      this.usdText = formatPico(this.cost);
      this.usdTextFor = this.cost;
    }
    return this.usdText;
  }

  /** The cost in CNY as exact decimal text. */
  costCnyText(): string {
    if (this.cnyTextFor !== this.cost) {
      this.cnyText = formatPico(this.costCny());
      this.cnyTextFor = this.cost;
    }
    return this.cnyText;
  }

  /** x-request-id, rate-limit headers and the cost-transparency headers, then `extra`. */
  headers(extra?: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { 'x-request-id': this.requestId };
    const limits = this.admission?.headers;
    if (limits) for (const name in limits) headers[name] = limits[name];
    headers['x-service-cost-usd'] = this.costUsdText();
    headers['x-service-cost-cny'] = this.costCnyText();
    headers['x-service-model-id'] = this.model?.name ?? (this.modelRequested && isModelName(this.modelRequested) ? this.modelRequested : '');
    headers['x-service-latency-ms'] = String(this.elapsedMs());
    headers['x-service-provider'] = this.channel ?? 'none';
    // The header Anthropic's SDK reads into `requestID`.
    if (this.surface === 'anthropic') headers['request-id'] = this.requestId;
    if (this.outputClamped !== null) headers[CLAMPED_HEADER] = String(this.outputClamped);
    if (extra) for (const name in extra) headers[name] = extra[name];
    return headers;
  }

  /** Answers an error in this surface's envelope (or, mid-stream, as a final error event). */
  async fail(sink: ResponseSink, err: unknown): Promise<void> {
    const gwErr: GatewayError = await recheckKeyRefusal(this.principal, toGatewayError(err), (keys) => getLimiter().denied(keys)); // lib/keys
    if (gwErr.status >= 500 && gwErr.code === 'internal_error') {
      log('error', 'request failed', { requestId: this.requestId, endpoint: this.endpoint, ...errorFields(err) });
    }
    this.errorCode = gwErr.code;
    if (this.outcome === 'ok') this.outcome = 'error';
    if (!sink.started && !this.admissionTried && this.principal && gwErr.status >= 400 && gwErr.status < 500) {
      // Refused before admission (bad body, unknown model): still counted against the account's
      // request rate, so that refused requests cannot be sent (and logged) without limit.
      this.admissionTried = true;
      const limited = await countRefused(this.principal, this.cfg, endpointOf(this.endpoint), this.requestId);
      if (limited) return this.fail(sink, limited);
    }
    if (sink.started) {
      // The client already has a 200; the log keeps that status and says how the stream ended.
      const body =
        this.streamError?.(gwErr) ??
        (this.surface === 'anthropic' ? `event: error\ndata: ${anthropicErrorBody(gwErr)}\n\n` : `data: ${openaiErrorBody(gwErr)}\n\n`);
      await sink.write(body).catch(() => undefined);
      sink.end();
      return;
    }
    this.status = gwErr.status;
    sink.start(gwErr.status, this.headers({ 'content-type': 'application/json', ...errorHeaders(gwErr) }));
    sink.end(this.surface === 'anthropic' ? anthropicErrorBody(gwErr) : openaiErrorBody(gwErr));
  }

  /** Releases limits, settles the reservation and queues the log row. Idempotent. */
  async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const latency = this.elapsedMs();
    inc('gateway_requests_total', { endpoint: this.endpoint, status: String(this.status) });
    observe('gateway_request_duration_ms', { endpoint: this.endpoint }, latency);
    if (this.cost > 0n) inc('gateway_cost_usd_pico_total', { endpoint: this.endpoint }, Number(this.cost));
    const u = this.usage;
    // A speculative admission the pipeline never waited for (the client left first): settle it.
    if (this.admitting && !this.admission) this.admission = await this.admitting.catch(() => undefined);
    if (this.admission) await this.releaseOnce(false);
    if (!this.principal || this.unlogged) return;
    enqueueLog({
      id: this.requestId,
      createdAt: new Date(this.startedAt),
      userId: this.principal.userId,
      apiKeyId: this.principal.keyId,
      endpoint: this.endpoint,
      modelRequested: this.modelRequested,
      modelServed: this.model?.name ?? null,
      channel: this.channel,
      attempts: this.attempts,
      status: this.status,
      outcome: this.outcome,
      stream: this.stream,
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      cacheReadTokens: u.cacheReadTokens,
      cacheWriteTokens: u.cacheWriteTokens,
      tokensEstimated: u.estimated,
      costPico: this.cost,
      costCnyPico: this.costCny(),
      cnyRate: this.cfg.usdToCny,
      latencyMs: latency,
      firstTokenMs: this.firstTokenMs,
      errorCode: this.errorCode,
      routeReason: this.routeReason,
    });
  }
}
