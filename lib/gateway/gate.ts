// A request's places in the limits: its admission (maybe speculative: the upstream call goes out
// while the limiter answers), the balance and tokens it reserved, the place held on a limited
// channel, and their release. The pipeline asks; the gate holds the leases.
import { randomBytes } from 'node:crypto';
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import type { Principal } from '@/lib/auth/principal';
import type { Usage } from '@/lib/billing/cost';
import { countRefused, release, startAdmission, type Admission, type Endpoint } from '@/lib/gateway/admission';
import { acquireChannel, channelLimited, releaseChannel, type ChannelRefusal } from '@/lib/gateway/admission/channel';
import { limitError } from '@/lib/gateway/admission/admit';
import { expireLeases } from '@/lib/gateway/admission';
import { LinkedSignal } from '@/lib/gateway/signal';
import type { UpstreamResponse } from '@/lib/gateway/upstream';
import type { ClientSignal } from '@/lib/gateway/types';
import type { GatewayError } from '@/lib/errors';
import type { RequestTrace } from '@/lib/telemetry/tracing';

/** What an admission is asked for. */
export interface AdmitAsk {
  principal: Principal;
  cfg: GatewayConfig;
  model: ModelInfo | null;
  endpoint: Endpoint;
  reserve: bigint;
  tokens: number;
  ip: string;
  stream: boolean;
  firstChannel?: ChannelInfo;
  trace?: RequestTrace;
}

const usedTokens = (u: Usage) => u.promptTokens + u.completionTokens + u.cacheReadTokens + u.cacheWriteTokens;

export class AdmissionGate {
  admission?: Admission;
  /** A speculative admission still on its way (the upstream call went out without waiting). */
  private admitting?: Promise<Admission>;
  /** The release of `admission`, once sent. */
  private released?: Promise<void>;
  /** The place held on a limited channel (its concurrency slot, its token reservation): admission/channel.ts. */
  private channelLease?: Admission;
  /** The first channel's place, taken alongside the admission (same event-loop turn: one round trip). */
  private pendingChannel?: { channel: string; taken: Promise<Admission | ChannelRefusal | null> };
  /** The refusal of a channel at its cap that frees first: the answer when every candidate was at its cap. */
  private channelRefusal?: ChannelRefusal;
  /** Tokens reserved by the tokens-per-minute rules (estimated input + the largest output). */
  private tokensReserved = 0;
  /** The balance reserved (null: not admitted): no charge exceeds it. */
  reserved: bigint | null = null;
  /** Admission was asked (or the refusal counted): a refusal is not counted again. */
  tried = false;
  /** The id of this run's leases (its concurrency slots and reservations): the request id, or per run for a fixed one. */
  readonly leaseId: string;

  constructor(
    requestId: string,
    fixed: boolean,
    /** A batch line: admitted as 'batch', released once per line id. */
    readonly batch: boolean,
  ) {
    // A fixed id (a batch line) may be run again by another instance while the first run's leases
    // still live: each run's leases are its own, so the second never overwrites the first's.
    this.leaseId = fixed ? `${requestId}.${randomBytes(4).toString('hex')}` : requestId;
  }

  /**
   * Admits the request (limits + balance reservation). Returns at once when the account has ample
   * room (speculative: the upstream may be called now, `gate` holds the answer back), else once
   * admitted; throws the refusal.
   */
  async admit(a: AdmitAsk): Promise<void> {
    const endpoint = this.batch ? 'batch' : a.endpoint;
    this.reserved = a.reserve;
    this.tried = true;
    this.tokensReserved = a.tokens;
    // A limited first channel is taken in the same turn as the admission (admission/channel.ts).
    const first = a.firstChannel;
    if (first && channelLimited(first) && !this.pendingChannel) {
      const taken = acquireChannel(first, a.cfg, `${this.leaseId}|${first.name}`, a.tokens, false).catch(() => null);
      this.pendingChannel = { channel: first.name, taken };
    }
    const pending = startAdmission(
      { principal: a.principal, cfg: a.cfg, model: a.model, endpoint, reserve: a.reserve, leaseId: this.leaseId, ip: a.ip, tokens: a.tokens },
      a.stream,
    );
    if (a.trace) {
      const done = a.trace.admission(pending.speculative, a.reserve);
      pending.admission.then(() => done(), done);
    }
    if (!pending.speculative) {
      this.admission = await pending.admission;
      return;
    }
    this.admitting = pending.admission;
    pending.admission.then(
      (adm) => {
        this.admission = adm;
      },
      () => undefined,
    );
  }

  /** A request refused before admission, counted against the account's request rate (once); the limit's refusal when over it. */
  async countRefusal(principal: Principal, cfg: GatewayConfig, endpoint: Endpoint, requestId: string): Promise<GatewayError | null> {
    if (this.tried) return null;
    this.tried = true;
    return countRefused(principal, cfg, endpoint, requestId);
  }

  /**
   * The signal of an upstream call: while the admission is speculative, one that also fires if it
   * is refused (cancelling the call at once).
   */
  signalFor(signal: ClientSignal): ClientSignal {
    if (!this.admitting || this.admission) return signal;
    const linked = new LinkedSignal(signal);
    this.admitting.catch(() => linked.abort());
    return linked;
  }

  /**
   * Waits for a speculative admission before anything of the upstream's reply is used. If it was
   * refused, the upstream reply (when there is one) is dropped, `cancelled` told, and the refusal
   * thrown: the client gets the same 429/402 as without speculation, and nothing is billed.
   */
  async confirm(res?: UpstreamResponse, cancelled?: () => void): Promise<void> {
    if (!this.admitting || this.admission) return;
    try {
      this.admission = await this.admitting;
    } catch (err) {
      res?.body.destroy();
      cancelled?.();
      throw err;
    }
  }

  /**
   * Takes a place on `channel` before an attempt on it, freeing the previous attempt's (it failed
   * before anything was generated: its tokens are refunded). True when the attempt may go on
   * (the channel has no limits, or had room); false when it is at its cap: the next channel is tried.
   */
  async takeChannel(channel: ChannelInfo, cfg: GatewayConfig): Promise<boolean> {
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
      if (pending) this.releaseChannel(0, false);
      if (channelLimited(channel)) taken = await acquireChannel(channel, cfg, `${this.leaseId}|${channel.name}`, this.tokensReserved, true).catch(() => null);
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
  channelsAtCap(attempts: number): GatewayError | null {
    if (!this.channelRefusal || attempts > 0) return null;
    return limitError(this.channelRefusal, 'channel', this.tokensReserved);
  }

  /** The client left mid-reply: its leases expire at once (its concurrency slot is free), settled later. */
  expire(): void {
    if (this.admission) expireLeases(this.admission);
    if (this.channelLease) expireLeases(this.channelLease);
  }

  /** Frees the channel's place (also one taken alongside an admission and never used), settled to the tokens used. */
  releaseChannel(tokens: number, urgent: boolean): void {
    const pending = this.pendingChannel;
    if (pending) {
      this.pendingChannel = undefined;
      void pending.taken.then((t) => {
        if (t && 'leaseId' in t) void releaseChannel(t, 0);
      });
    }
    if (!this.channelLease) return;
    void releaseChannel(this.channelLease, tokens, urgent);
    this.channelLease = undefined;
  }

  /**
   * Settles and frees everything the request holds, `cost` charged and `usage` counted (once: later
   * calls return the first one's promise). `cacheHit`: no upstream tokens were used.
   */
  release(cost: bigint, usage: Usage, cacheHit: boolean, urgent: boolean, requestId: string): Promise<void> | undefined {
    // The channel's place goes in the same turn as the admission's release (one batch).
    this.releaseChannel(usedTokens(usage), urgent);
    if (!this.admission) return undefined;
    // A cache hit used no upstream tokens: its tokens-per-minute reservation (none) settles at 0.
    const tokens = cacheHit ? 0 : usedTokens(usage);
    // A batch line's id is fixed by the batch and line: run again after a takeover, it is charged once.
    return (this.released ??= release(this.admission, cost, tokens, urgent, this.batch ? requestId : undefined));
  }

  /** A speculative admission nobody waited for (the client left first): its answer, so that it is released. */
  async settled(): Promise<void> {
    if (this.admitting && !this.admission) this.admission = await this.admitting.catch(() => undefined);
  }
}
