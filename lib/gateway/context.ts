import { randomBytes } from 'node:crypto';
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import { authenticate, type Principal } from '@/lib/auth/principal';
import { anthropicErrorBody, errorHeaders, GatewayError, openaiErrorBody, toGatewayError } from '@/lib/errors';
import { readJsonBody, type JsonObject } from '@/lib/gateway/body';
import { recordChannelResult } from '@/lib/gateway/router';
import { costOf, cnyOf, noUsage, type Usage } from '@/lib/billing/cost';
import { formatPico } from '@/lib/billing/money';
import { enqueueLog } from '@/lib/billing/writer';
import { inc, observe } from '@/lib/metrics';
import { log, errorFields } from '@/lib/log';
import { release, type Admission } from '@/lib/gateway/admission';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';

export type Surface = 'openai' | 'anthropic';

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
  admission?: Admission;
  model?: ModelInfo;
  modelRequested: string | null = null;
  channel: string | null = null;
  attempts: Attempt[] = [];
  routeReason: string | null = null;
  stream = false;
  firstTokenMs: number | null = null;
  usage: Usage = noUsage();
  cost = 0n;
  status = 200;
  outcome = 'ok';
  errorCode: string | null = null;
  private finished = false;

  constructor(
    readonly surface: Surface,
    readonly endpoint: string,
    readonly cfg: GatewayConfig,
  ) {}

  /** Authenticates, honours the maintenance switch and reads the JSON body once. */
  async open(req: GatewayRequest): Promise<{ raw: Buffer; json: JsonObject }> {
    this.principal = await authenticate(req.headers);
    if (this.cfg.maintenance) throw new GatewayError('maintenance', 'The gateway is under maintenance. Please retry shortly.', { retryAfterMs: 30_000 });
    const body = await readJsonBody(req, this.cfg.limits.max_body_bytes);
    this.modelRequested = typeof body.json.model === 'string' ? body.json.model : null;
    return body;
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

  elapsedMs(): number {
    return Math.round(performance.now() - this.t0);
  }

  markFirstToken(): void {
    if (this.firstTokenMs === null) this.firstTokenMs = this.elapsedMs();
  }

  /** Prices the usage with the model that actually served. */
  settleCost(usage: Usage): bigint {
    this.usage = usage;
    this.cost = this.model ? costOf(this.model, usage) : 0n;
    return this.cost;
  }

  costCny(): bigint {
    return cnyOf(this.cost, this.cfg.cnyRateNano);
  }

  /** x-request-id, rate-limit headers and the cost-transparency headers. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'x-request-id': this.requestId,
      ...this.admission?.headers,
      'x-service-cost-usd': formatPico(this.cost),
      'x-service-cost-cny': formatPico(this.costCny()),
      'x-service-model-id': this.model?.name ?? this.modelRequested ?? '',
      'x-service-latency-ms': String(this.elapsedMs()),
      'x-service-provider': this.channel ?? 'none',
      ...extra,
    };
  }

  /** Answers an error in this surface's envelope (or, mid-stream, as a final error event). */
  async fail(sink: ResponseSink, err: unknown): Promise<void> {
    const gwErr: GatewayError = toGatewayError(err);
    if (gwErr.status >= 500 && gwErr.code === 'internal_error') {
      log('error', 'request failed', { requestId: this.requestId, endpoint: this.endpoint, ...errorFields(err) });
    }
    this.errorCode = gwErr.code;
    if (this.outcome === 'ok') this.outcome = 'error';
    if (sink.started) {
      // The client already has a 200; the log keeps that status and says how the stream ended.
      const body = this.surface === 'anthropic' ? `event: error\ndata: ${anthropicErrorBody(gwErr)}\n\n` : `data: ${openaiErrorBody(gwErr)}\n\n`;
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
    if (this.admission) await release(this.admission, this.cost, u.promptTokens + u.completionTokens + u.cacheReadTokens + u.cacheWriteTokens);
    if (!this.principal) return;
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
