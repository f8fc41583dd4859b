// The one door upstream: callChannel() owns an attempt on a channel from the provider's request to
// its classified outcome. Every decision about an upstream status is here: the channel's fault
// (fallback, the breaker counts it), a rate limit (fallback, not counted), the channel's key or
// account refused (fallback, counted), the caller's mistake (passed through in the client's
// envelope), or an answer to relay. The pipeline, the channel probe and the admin test button all
// call it (lib/channels/probe.ts).
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import { recordChannelResult } from '@/lib/gateway/router';
import { recordHealth } from '@/lib/channels/health';
import type { ToolCalls } from '@/lib/pricing/tools';
import type { UsageClass } from '@/lib/pricing/breakdown';
import { inc } from '@/lib/metrics';
import { callUpstream, discard, readUpstreamBody, redactUpstreamText, type CallOptions, type UpstreamResponse } from '@/lib/gateway/upstream';
import type { Provider } from '@/lib/gateway/providers';
import type { ClientSignal } from '@/lib/gateway/types';
import type { AttemptTrace } from '@/lib/telemetry/tracing';

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
/** The most of an upstream's error reply read (passed through to the caller). */
const MAX_ERROR_BYTES = 1024 * 1024;

// Detached once the headers are in: a reply is read on after its client left, to bill what was generated.
const DETACHED: CallOptions = { detachOnHeaders: true };

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
  answered(status: number): void {
    this.answeredMs = Math.round(performance.now() - this.started);
    this.record.status = status;
  }

  /** The call was cancelled by us (its admission was refused): not the channel's failure. */
  cancel(message: string): void {
    this.record.error = message;
    this.record.ms = Math.round(performance.now() - this.started);
    this.trace?.end(this.record);
  }

  /** A note for the log of why the attempt ended as it did (set before `fail` or `finish`). */
  note(error: string): void {
    this.record.error = error;
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

/** One call through the door. */
export interface ChannelCall {
  channel: ChannelInfo;
  provider: Provider;
  /** The provider's path of the operation (provider.path). */
  path: string;
  body: string | Buffer;
  headers: Record<string, string>;
  /** The call's signal (it may also fire for a refused speculative admission: `gate` then throws the refusal). */
  signal: ClientSignal;
  /** The client's own signal, when not `signal`: a call that failed because the client left is not the channel's failure. */
  client?: ClientSignal;
  /** A 403 is the caller's, not the channel key's (translate/types.ts UpstreamCall.forbiddenIsCallers). */
  forbiddenIsCallers?: boolean;
  /** The attempt's log record, metrics and breaker; none for a probe (its caller records health). */
  tracker?: AttemptTracker;
  /**
   * Awaited before anything of the reply is used (a speculative admission: it throws the refusal,
   * having dropped `res`); also after a failed call, so that a refusal wins over a fallback.
   */
  gate?: (res?: UpstreamResponse) => Promise<void>;
}

/** What became of a call. */
export type ChannelOutcome =
  /** An answer to relay (status below 400). */
  | { kind: 'answered'; res: UpstreamResponse }
  /** The caller's mistake as the upstream sees it: its error text (the channel's secrets redacted), not retried, not billed. */
  | { kind: 'rejected'; status: number; text: string }
  /** Nothing to relay: the next channel is tried. `status` when the upstream answered one. */
  | { kind: 'failed'; status?: number; reason: string; cause?: unknown };

/**
 * One upstream call on a channel, classified. Throws only what `gate` throws (an admission refused);
 * when the client's signal aborts, the call fails and the caller checks the signal.
 */
export async function callChannel(c: ChannelCall): Promise<ChannelOutcome> {
  const { channel, tracker } = c;
  let res: UpstreamResponse;
  try {
    res = await callUpstream(channel, c.path, c.body, c.headers, c.signal, DETACHED);
  } catch (err) {
    if ((c.client ?? c.signal).aborted) return { kind: 'failed', reason: 'client closed', cause: err };
    await c.gate?.();
    tracker?.fail((err as Error).message);
    return { kind: 'failed', reason: (err as Error).message, cause: err };
  }
  await c.gate?.(res);
  const status = res.status;
  tracker?.answered(status);
  // 401/403: the channel's own key was refused (revoked, out of credit): the channel's failure,
  // never the caller's; the next channel is tried and the breaker counts it. A rate limit is
  // tried elsewhere too, but counted only when it says the operator's account is out of quota.
  if (channelFault(status, c.forbiddenIsCallers)) {
    if (rateLimited(status)) {
      const text = await readUpstreamBody(res.body, RATE_LIMIT_BODY_BYTES).catch(() => '');
      if (!c.provider.keyRefused?.(status, text)) {
        tracker?.limited(status);
        return { kind: 'failed', status, reason: `upstream rate-limited or overloaded (${status})` };
      }
      tracker?.fail(`upstream refused the channel's account (${status})`, status);
      return { kind: 'failed', status, reason: `upstream refused the channel's account (${status})` };
    }
    discard(res.body);
    tracker?.fail(`upstream answered ${status}`, status);
    return { kind: 'failed', status, reason: `upstream answered ${status}` };
  }
  if (status < 400) return { kind: 'answered', res };
  const text = await readUpstreamBody(res.body, MAX_ERROR_BYTES).catch(() => '');
  // The channel's key refused, or the operator's account out of credit: never the caller's to
  // see (a generic 502 once no channel is left), the next channel is tried, the breaker counts it.
  if (c.provider.keyRefused?.(status, text)) {
    tracker?.fail(`upstream refused the channel's key or account (${status})`, status);
    return { kind: 'failed', status, reason: `upstream refused the channel's key or account (${status})` };
  }
  // An upstream may echo what it was sent (the channel's key among the headers).
  tracker?.finish(true, false);
  tracker?.note(`upstream answered ${status}`);
  return { kind: 'rejected', status, text: redactUpstreamText(text, channel) };
}
