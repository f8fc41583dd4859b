import { randomBytes } from 'node:crypto';
import { CLAMPED_HEADER } from '@/lib/gateway/admission/clamp';
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import { authenticate, type Principal } from '@/lib/auth/principal';
import { anthropicErrorBody, errorHeaders, GatewayError, geminiErrorBody, openaiErrorBody, toGatewayError } from '@/lib/errors';
import { readJsonBody, type JsonBody } from '@/lib/gateway/body';
import { recordChannelResult } from '@/lib/gateway/router';
import { recordHealth } from '@/lib/channels/health';
import { providerHeader } from '@/lib/channels/labels';
import { breakdownOf, cnyOf, noUsage, type Usage } from '@/lib/billing/cost';
import { storedBreakdown, type Adjustment, type CallLine, type StoredBreakdown, type UsageClass } from '@/lib/billing/breakdown';
import { CACHE_HEADER, hitCost } from '@/lib/cache/response-cache';
import { BUILT_IN_TOOLS, type ToolCalls } from '@/lib/billing/tools';
import { formatPico } from '@/lib/billing/money';
import { enqueueLog, logQueueFull, storableText } from '@/lib/billing/writer';
import { inc, observe } from '@/lib/metrics';
import { log, errorFields } from '@/lib/log';
import { countRefused, release, startAdmission, type Admission, type Endpoint } from '@/lib/gateway/admission';
import { acquireChannel, channelLimited, releaseChannel, type ChannelRefusal } from '@/lib/gateway/admission/channel';
import { limitError } from '@/lib/gateway/admission/admit';
import { LinkedSignal } from '@/lib/gateway/signal';
import { callUpstream, discard, readUpstreamBody, type CallOptions, type UpstreamResponse } from '@/lib/gateway/upstream';
import type { Provider } from '@/lib/gateway/providers';
import type { UpstreamCall } from '@/lib/gateway/translate/types';
import { DROPPED_HEADER, droppedHeaderValue } from '@/lib/gateway/translate/dropped';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { checkKeyAccess, keyClientIp } from '@/lib/keys/access';
import { recheckKeyRefusal } from '@/lib/keys/admission';
import { getLimiter } from '@/lib/gateway/runtime';
import { operationOf, type AttemptTrace, type RequestTrace } from '@/lib/telemetry/tracing';
import { observeGenAi } from '@/lib/telemetry/genai-metrics';

export type Surface = 'openai' | 'anthropic' | 'gemini';

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

/** A rate limit or overload answer (429; 529 is Anthropic's "overloaded"): fallback, but not the channel's failure. */
function rateLimited(status: number): boolean {
  return status === 429 || status === 529;
}

/** An answer read to tell a rate limit from an account out of quota: OpenAI's and Google's are small. */
const RATE_LIMIT_BODY_BYTES = 64 * 1024;

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
  /** What this attempt's upstream call left out of the request (x-service-dropped). */
  dropped?: readonly string[];
  /** How the serving attempt was billed, when beyond plain token prices (capped usage, tool calls). */
  billing?: BillingNote;
}

/** The request log's note of a charge: an upstream report capped at the reservation, built-in tool calls billed. */
export interface BillingNote {
  capped?: boolean;
  completionTokensReported?: number;
  completionTokensBilled?: number;
  costUsdPriced?: string;
  costUsdBilled?: string;
  /** Built-in tool calls billed at their per-call price (tool -> calls). */
  toolCalls?: ToolCalls;
  toolCostUsd?: string;
  /** The calls the upstream reported, when more than were reserved (and billed). */
  toolCallsReported?: ToolCalls;
  /**
   * Usage classes the upstream reported that the model's price list has no price for
   * (docs/decisions/042): billed at the rate of the class they are part of, or not at all.
   */
  unpriced?: UsageClass[];
}

/** The header (and stream trailer) naming the usage classes a request reported without a price of their own. */
export const UNPRICED_HEADER = 'x-service-unpriced';

/** The per-call fee of a reply's built-in tool calls (lib/billing/tools.ts). */
export interface ToolFee {
  cost: bigint;
  billed: ToolCalls;
  reported: ToolCalls;
}

/** One upstream try: its log record, the per-channel metrics and the circuit breaker, kept together. */
export class AttemptTracker {
  readonly record: Attempt;
  private readonly started = performance.now();
  /** This attempt's span, when tracing is on (lib/telemetry/tracing.ts). */
  trace?: AttemptTrace;
  /** Time to the upstream's headers: channel health's latency (a long stream is not a slow channel). */
  private answeredMs: number | undefined;

  constructor(
    private readonly channel: ChannelInfo,
    model: ModelInfo,
    private readonly cfg: GatewayConfig,
    /** The account whose request this is: the breaker counts the distinct accounts of a failure streak. */
    private readonly account?: string,
  ) {
    this.record = { channel: channel.name, model: model.name, ok: false, ms: 0 };
    inc('gateway_upstream_attempts_total', { channel: channel.name });
  }

  /** The channel failed (fallback may follow); always answers false for `return tracker.fail(...)`. */
  fail(message: string, status?: number): false {
    this.record.error = message;
    if (status !== undefined) this.record.status = status;
    this.finish(false);
    this.trace?.end(this.record);
    inc('gateway_upstream_failures_total', { channel: this.channel.name });
    return false;
  }

  /**
   * The upstream refused for its rate limit or load (429, Anthropic's 529): the next channel is
   * tried, but it is not the channel's ill health. One account's burst draws such answers, and
   * counting them would let it open the breaker and disable the channel for every tenant.
   */
  limited(status: number): void {
    this.record.error = `upstream rate-limited or overloaded (${status})`;
    this.record.status = status;
    this.record.ms = Math.round(performance.now() - this.started);
    inc('gateway_upstream_rate_limited_total', { channel: this.channel.name });
    this.trace?.end(this.record);
    recordHealth(this.channel, null, this.record.ms, { status, error: this.record.error });
  }

  /** The upstream's headers arrived. */
  answered(): void {
    this.answeredMs = Math.round(performance.now() - this.started);
  }

  /** The call was cancelled by us (its admission was refused): not the channel's failure. */
  cancel(message: string): void {
    this.record.error = message;
    this.record.ms = Math.round(performance.now() - this.started);
    this.trace?.end(this.record);
  }

  /** The channel answered; `ok` is whether the reply itself succeeded. */
  finish(healthy: boolean, ok = healthy): void {
    this.record.ms = Math.round(performance.now() - this.started);
    this.record.ok = ok;
    recordChannelResult(this.channel.name, healthy, this.cfg, this.account);
    if (this.trace && healthy) this.trace.end(this.record);
    // Channel health's sliding window (lib/channels/health.ts): in memory, shared once a second.
    recordHealth(this.channel, healthy, this.answeredMs ?? this.record.ms, healthy ? undefined : { status: this.record.status, error: this.record.error });
  }
}

/** Everything one request accumulates on its way through the pipeline, and its ending. */
// Request ids: a random per-process prefix (64 bits) and a counter; unique across instances and
// restarts without spending a CSPRNG call per request. They are identifiers, not secrets.
const ID_PREFIX = randomBytes(8).toString('hex');
let idSeq = 0;

export class RequestContext {
  readonly requestId: string;
  readonly startedAt: number;
  private readonly t0 = performance.now();
  principal?: Principal;
  /** The client address the key's ranges are checked against (lib/keys/access.ts). */
  keyIp = '';
  admission?: Admission;
  /** A speculative admission still on its way (the upstream call went out without waiting). */
  private admitting?: Promise<Admission>;
  /** The release of `admission`, once sent (endStream or finish). */
  private released?: Promise<void>;
  /** The place held on a limited channel (its concurrency slot, its token reservation): admission/channel.ts. */
  channelLease?: Admission;
  /** The first channel's place, taken alongside the admission (same event-loop turn: one round trip). */
  private pendingChannel?: { channel: string; taken: Promise<Admission | ChannelRefusal | null> };
  /** The refusal of a channel at its cap that frees first: the answer when every candidate was at its cap. */
  private channelRefusal?: ChannelRefusal;
  /** Tokens reserved by the tokens-per-minute rules (estimated input + the largest output). */
  private tokensReserved = 0;
  model?: ModelInfo;
  modelRequested: string | null = null;
  channel: string | null = null;
  attempts: Attempt[] = [];
  routeReason: string | null = null;
  /** The region the request must be served in (lib/gateway/region.ts); null: anywhere. */
  region: string | null = null;
  /** The region of the channel that served (X-Service-Region, the log). */
  servedRegion: string | null = null;
  /** What the answering attempt dropped from the request (the `x-service-dropped` header). */
  dropped: readonly string[] | undefined = undefined;
  /** The output cap a request was lowered to, to fit its key budget or balance (admission/clamp.ts). */
  outputClamped: number | null = null;
  stream = false;
  firstTokenMs: number | null = null;
  usage: Usage = noUsage();
  cost = 0n;
  /** Usage classes the upstream reported that the model has no price of its own for, once settled (x-service-unpriced). */
  unpriced: readonly UsageClass[] = [];
  /** How `cost` was made (settleCost): stored with the log row (docs/decisions/043). */
  priceBreakdown: StoredBreakdown | null = null;
  status = 200;
  outcome = 'ok';
  errorCode: string | null = null;
  private finished = false;
  /** The balance reservation of the admission. */
  private reserved: bigint | null = null;
  private admissionTried = false;
  /** Shed at the log queue's bound: no log row. */
  private unlogged = false;
  /** A stream error in the surface's own event format, when it is not chat chunks (the Responses API's `error` event). */
  streamError?: (err: GatewayError) => string;
  /** The request's spans, when tracing is on (lib/telemetry/tracing.ts); every hook is `this.trace?.…`. */
  trace?: RequestTrace;
  /** The response cache's answer for an opted-in request (the `X-Service-Cache` header): lib/cache/response-cache.ts. */
  cacheResult?: 'hit' | 'miss';
  /** Answered from the response cache: billed at the operator's fraction (billionths), no upstream tokens counted. */
  cacheHitBilledNano: bigint | null = null;

  /**
   * A line of a batch (lib/batches): its request id and time are fixed by the batch and line (a
   * line run again after a takeover writes the same log row: logged and billed once), and its
   * prices are lowered by the model's batch discount (percent).
   */
  batch?: { discountPercent(model: ModelInfo): number };

  constructor(
    readonly surface: Surface,
    readonly endpoint: string,
    readonly cfg: GatewayConfig,
    fixed?: { requestId: string; startedAt: number },
  ) {
    this.requestId = fixed?.requestId ?? `req_${ID_PREFIX}${(idSeq++).toString(36).padStart(8, '0')}`;
    this.startedAt = fixed?.startedAt ?? Date.now();
    // A fixed id (a batch line) may be run again by another instance while the first run's leases
    // still live: each run's leases are its own, so the second never overwrites the first's.
    this.leaseId = fixed ? `${this.requestId}.${randomBytes(4).toString('hex')}` : this.requestId;
  }

  /** The id of this run's leases (its concurrency slots and reservations): the request id, or per run for a fixed one. */
  private readonly leaseId: string;

  /** The key's expiry and address ranges, as every /v1 route checks them (lib/keys/access.ts). */
  checkKey(principal: Principal, req: GatewayRequest): void {
    checkKeyAccess(principal.guard, (this.keyIp = keyClientIp(req)));
  }

  /** Authenticates, honours the maintenance switch and reads the JSON body once. */
  async open(req: GatewayRequest): Promise<JsonBody> {
    this.principal = await authenticate(req);
    this.checkKey(this.principal, req);
    if (this.cfg.maintenance) throw new GatewayError('maintenance', 'The gateway is under maintenance. Please retry shortly.', { retryAfterMs: 30_000 });
    // Every request ends in a log row and maybe a charge: with the write-behind queue at its bound
    // (the database unwritable for long), a request is refused rather than served unbilled.
    if (logQueueFull()) {
      this.unlogged = true; // a row for the refusal would grow the queue past its bound
      throw new GatewayError('unavailable', 'The gateway cannot record requests right now. Please retry shortly.', { retryAfterMs: 5000 });
    }
    const body = await readJsonBody(req, this.cfg.limits.max_body_bytes);
    if (this.trace?.captureContent) this.trace.input(body.json);
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
  async admit(model: ModelInfo | null, endpoint: Endpoint, reserve: bigint, tokens = 0, firstChannel?: ChannelInfo): Promise<void> {
    if (this.batch) endpoint = 'batch';
    this.reserved = reserve;
    this.admissionTried = true;
    this.tokensReserved = tokens;
    // A limited first channel is taken in the same turn as the admission (admission/channel.ts).
    if (firstChannel && channelLimited(firstChannel) && !this.pendingChannel) {
      const taken = acquireChannel(firstChannel, this.cfg, `${this.leaseId}|${firstChannel.name}`, tokens, false).catch(() => null);
      this.pendingChannel = { channel: firstChannel.name, taken };
    }
    const pending = startAdmission(
      { principal: this.principal!, cfg: this.cfg, model, endpoint, reserve, leaseId: this.leaseId, ip: this.keyIp, tokens },
      this.stream,
    );
    if (this.trace) {
      const done = this.trace.admission(pending.speculative, reserve);
      pending.admission.then(() => done(), done);
    }
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

  /** Waits for a speculative admission (a cache hit's answer needs no upstream call to gate). */
  async admitted(): Promise<void> {
    if (this.admitting && !this.admission) this.admission = await this.admitting;
  }

  /** The client left before an answer: recorded as client_closed (499), thrown to end the pipeline. */
  clientGone(): GatewayError {
    this.outcome = 'client_closed';
    this.status = 499;
    return new GatewayError('invalid_request', 'Client closed the request.', { status: 499 });
  }

  /**
   * Takes a place on `channel` before an attempt on it, freeing the previous attempt's (it failed
   * before anything was generated: its tokens are refunded). True when the attempt may go on
   * (the channel has no limits, or had room); false when it is at its cap: the next channel is tried.
   */
  async takeChannel(channel: ChannelInfo): Promise<boolean> {
    if (this.channelLease) {
      void releaseChannel(this.channelLease, 0);
      this.channelLease = undefined;
    }
    let taken: Admission | ChannelRefusal | null = null;
    const pending = this.pendingChannel;
    if (pending?.channel === channel.name) {
      this.pendingChannel = undefined;
      taken = await pending.taken;
    } else {
      // The first attempt went elsewhere (its channel could not carry the call): its place is not held for nothing.
      if (pending) this.releaseChannelOnce(false);
      if (channelLimited(channel))
        taken = await acquireChannel(channel, this.cfg, `${this.leaseId}|${channel.name}`, this.tokensReserved, true).catch(() => null);
    }
    // A limiter that cannot answer does not stop the request (the failover limiter answers from memory).
    if (taken === null) return true;
    if ('leaseId' in taken) {
      this.channelLease = taken;
      return true;
    }
    if (!this.channelRefusal || taken.retryAfterMs < this.channelRefusal.retryAfterMs) this.channelRefusal = taken;
    return false;
  }

  /** Every candidate channel was at its cap (none was tried): the 429 naming the one that frees first. */
  channelsAtCap(): GatewayError | null {
    if (!this.channelRefusal || this.attempts.length > 0) return null;
    return limitError(this.channelRefusal, 'channel', this.tokensReserved);
  }

  /** Frees the channel's place (also one taken alongside an admission and never used), settled to the tokens used. */
  private releaseChannelOnce(urgent: boolean): void {
    const pending = this.pendingChannel;
    if (pending) {
      this.pendingChannel = undefined;
      void pending.taken.then((t) => {
        if (t && 'leaseId' in t) void releaseChannel(t, 0);
      });
    }
    if (!this.channelLease) return;
    const u = this.usage;
    void releaseChannel(this.channelLease, u.promptTokens + u.completionTokens + u.cacheReadTokens + u.cacheWriteTokens, urgent);
    this.channelLease = undefined;
  }

  beginAttempt(channel: ChannelInfo, model: ModelInfo): AttemptTracker {
    const tracker = new AttemptTracker(channel, model, this.cfg, this.principal?.userId);
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
    provider: Provider,
    dropped?: readonly string[],
  ): Promise<{ res: UpstreamResponse; tracker: AttemptTracker } | null> {
    const tracker = this.beginAttempt(channel, model);
    if (dropped) tracker.record.dropped = dropped;
    if (req.signal.aborted) throw this.clientGone();
    if (this.trace) {
      tracker.trace = this.trace.attempt(channel, model.name, operationOf(this.endpoint, this.surface), this.attempts.length);
      headers = tracker.trace.inject(headers);
    }
    const res = await this.callUpstream(req, tracker, channel, path, upstream.body, headers);
    if (!res) return null;
    tracker.answered();
    tracker.record.status = res.status;
    // 401/403: the channel's own key was refused (revoked, out of credit): the channel's failure,
    // never the caller's; the next channel is tried and the breaker counts it. A rate limit is
    // tried elsewhere too, but counted only when it says the operator's account is out of quota.
    if (channelFault(res.status, upstream.forbiddenIsCallers)) {
      if (rateLimited(res.status)) {
        const text = await readUpstreamBody(res.body, RATE_LIMIT_BODY_BYTES).catch(() => '');
        if (!provider.keyRefused?.(res.status, text)) {
          tracker.limited(res.status);
          return null;
        }
        tracker.fail(`upstream refused the channel's account (${res.status})`, res.status);
        return null;
      }
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
   * Prices the usage with the model that actually served, never above what was reserved: the
   * completion at most `maxCompletion` tokens (the output cap the reservation assumed), the whole
   * charge at most the reservation. Admission checked the reservation against the balance and the
   * key's budget, so no upstream report (4,096 tokens for `max_tokens: 1`, 1e300) can take either
   * past its limit. A capped report is counted in /metrics and noted on the serving attempt of the
   * request log (`billing`). The cost of prompt tokens the body's size does not bound (media fetched
   * by URL) is, by the same rule, at most the reservation.
   */
  settleCost(usage: Usage, maxCompletion?: number, tools?: ToolFee): bigint {
    const reported = usage.completionTokens;
    if (maxCompletion !== undefined && reported > maxCompletion) usage = { ...usage, completionTokens: maxCompletion };
    this.usage = usage;
    // Every step from the priced lines to the charge is recorded as it is applied (the log's breakdown).
    const breakdown = this.model ? breakdownOf(this.model, usage) : null;
    let priced = breakdown?.costUsd ?? 0n;
    this.unpriced = breakdown?.unpriced ?? [];
    if (this.unpriced.length) this.noteUnpriced(breakdown!.unpriced);
    const steps: Adjustment[] = [];
    const step = (kind: Adjustment['kind'], detail: string, after: bigint) => {
      steps.push({ kind, detail, amount: after - priced });
      return after;
    };
    if (this.cacheHitBilledNano !== null)
      priced = step('response_cache', formatPico(this.cacheHitBilledNano * 1000n), hitCost(priced, this.cacheHitBilledNano));
    if (this.batch && this.model) {
      const percent = this.batch.discountPercent(this.model);
      priced = step('batch_discount', String(percent), (priced * BigInt(Math.round((100 - percent) * 100))) / 10_000n);
    }
    const calls: CallLine[] = [];
    if (tools && Object.keys(tools.reported).length > 0) {
      priced += tools.cost;
      for (const [tool, n] of Object.entries(tools.billed)) {
        const rate = this.model?.toolPrices[tool as keyof ToolCalls] ?? 0n;
        if (n) calls.push({ tool, calls: n, rate, cost: BigInt(n) * rate });
      }
      this.noteBilling({ toolCalls: tools.billed, toolCostUsd: formatPico(tools.cost) });
      if (BUILT_IN_TOOLS.some((t) => (tools.reported[t] ?? 0) > (tools.billed[t] ?? 0))) this.noteBilling({ toolCallsReported: tools.reported });
    }
    const cost = this.reserved !== null && priced > this.reserved ? this.reserved : priced;
    if (this.model && (reported !== usage.completionTokens || cost !== priced)) {
      inc('gateway_usage_capped_total', { model: this.model.name });
      const note: BillingNote = { capped: true };
      if (reported !== usage.completionTokens) {
        note.completionTokensReported = reported;
        note.completionTokensBilled = usage.completionTokens;
      }
      if (cost !== priced) {
        note.costUsdPriced = formatPico(priced);
        note.costUsdBilled = formatPico(cost);
      }
      this.noteBilling(note);
      log('warn', 'upstream usage beyond the reservation; charged the reservation', { requestId: this.requestId, model: this.model.name, ...note });
    }
    if (breakdown) {
      if (cost !== priced) step('reservation_cap', '', cost);
      this.priceBreakdown = storedBreakdown(breakdown, calls, steps);
    }
    this.cost = cost;
    return this.cost;
  }

  /**
   * Usage the price list cannot price exactly: never silent. A warning, a metric per model and
   * class, the billing note of the log row, and the x-service-unpriced header (a stream's trailer).
   */
  private noteUnpriced(classes: UsageClass[]): void {
    this.noteBilling({ unpriced: classes });
    for (const c of classes) inc('gateway_usage_unpriced_total', { model: this.model!.name, class: c });
    log('warn', 'upstream reported usage the price list has no price for', { requestId: this.requestId, model: this.model!.name, unpriced: classes });
  }

  /** The classes of UNPRICED_HEADER, once settled ('' when every class had its price). */
  private unpricedText(): string {
    return this.unpriced.join(', ');
  }

  /** Adds to the `billing` note of the serving attempt (the last one tried): what the log detail shows of how the charge was made. */
  noteBilling(note: BillingNote): void {
    const served = this.attempts.at(-1);
    if (served) served.billing = { ...served.billing, ...note };
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
    this.releaseChannelOnce(true);
    sink.end(tail, this.costTrailers());
  }

  private costTrailers(): Record<string, string> {
    const trailers: Record<string, string> = { 'x-service-cost-usd': this.costUsdText(), 'x-service-cost-cny': this.costCnyText() };
    const unpriced = this.unpricedText();
    if (unpriced) trailers[UNPRICED_HEADER] = unpriced;
    return trailers;
  }

  /** Sends the release of `admission` (once: later calls return the first one's promise). */
  private releaseOnce(urgent: boolean): Promise<void> {
    const u = this.usage;
    // A cache hit used no upstream tokens: its tokens-per-minute reservation (none) settles at 0.
    const tokens = this.cacheHitBilledNano !== null ? 0 : u.promptTokens + u.completionTokens + u.cacheReadTokens + u.cacheWriteTokens;
    // A batch line's id is fixed by the batch and line: run again after a takeover, it is charged once.
    return (this.released ??= release(this.admission!, this.cost, tokens, urgent, this.batch ? this.requestId : undefined));
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
    headers['x-service-provider'] = this.channel === null ? 'none' : providerHeader(this.channel, this.cfg);
    if (this.servedRegion !== null && this.channel !== null) headers['x-service-region'] = this.servedRegion;
    const dropped = droppedHeaderValue(this.dropped);
    if (dropped) headers[DROPPED_HEADER] = dropped;
    // The header Anthropic's SDK reads into `requestID`.
    if (this.surface === 'anthropic') headers['request-id'] = this.requestId;
    if (this.outputClamped !== null) headers[CLAMPED_HEADER] = String(this.outputClamped);
    if (this.cacheResult) headers[CACHE_HEADER] = this.cacheResult;
    const unpriced = this.unpricedText();
    if (unpriced) headers[UNPRICED_HEADER] = unpriced;
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
    if (!sink.started && !this.admissionTried && this.principal && !this.batch && gwErr.status >= 400 && gwErr.status < 500) {
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
        (this.surface === 'anthropic' ? `event: error\ndata: ${anthropicErrorBody(gwErr)}\n\n` : `data: ${this.errorBody(gwErr)}\n\n`);
      await sink.write(body).catch(() => undefined);
      // The trailers the stream announced: the cost so far (what is billed) and what ended it.
      sink.end(undefined, { ...this.costTrailers(), 'x-service-error': gwErr.code });
      return;
    }
    this.status = gwErr.status;
    sink.start(gwErr.status, this.headers({ 'content-type': 'application/json', ...errorHeaders(gwErr) }));
    sink.end(this.errorBody(gwErr));
  }

  /** An error in this surface's envelope. */
  private errorBody(err: GatewayError): string {
    if (this.surface === 'anthropic') return anthropicErrorBody(err);
    return this.surface === 'gemini' ? geminiErrorBody(err) : openaiErrorBody(err);
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
    // The channel's place goes in the same turn as the admission's release (one batch).
    this.releaseChannelOnce(false);
    if (this.admission) await this.releaseOnce(false);
    observeGenAi(this);
    if (!this.principal || this.unlogged) return;
    const logged = this.trace?.logWrite();
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
      priceBreakdown: this.priceBreakdown,
      latencyMs: latency,
      firstTokenMs: this.firstTokenMs,
      errorCode: this.errorCode,
      routeReason: this.routeReason,
      region: this.channel === null ? null : this.servedRegion,
      billedTo: this.admission?.plan ? 'plan' : null,
      projectId: this.principal.projectId,
      memberId: this.principal.memberId,
    });
    logged?.();
  }
}
