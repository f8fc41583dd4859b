// The contract between the pipeline and a protocol translator: one translator per (client surface,
// upstream protocol) pair, pure functions for whole requests, replies and errors, and a stateful
// transformer for streams. The pipeline never asks which protocols a translator joins.
import type { ModelInfo, UpstreamProtocolName } from '@/lib/config';
import type { JsonBody, JsonObject } from '@/lib/gateway/body';
import type { Operation } from '@/lib/gateway/providers/types';
import type { ToolCalls } from '@/lib/pricing/tools';
import type { PricedServiceTier, UsageSplit } from '@/lib/billing/cost';

/** What the client speaks (the surface it called). */
export type ClientProtocol = 'openai' | 'anthropic';
/** What an upstream channel speaks (the operator config's `protocol` of a channel). */
export type UpstreamProtocol = UpstreamProtocolName;

/** Facts about one translated call. */
export interface CallInfo {
  /** The model that serves this attempt: its name goes upstream (and back in the client's reply). */
  model: ModelInfo;
  /** The client asked for a stream. */
  stream: boolean;
  /** The gateway's request id: a seed for ids the translator must mint (chatcmpl-…, msg_…, call_…). */
  requestId: string;
  /** Unix seconds of the request (OpenAI's `created`). */
  created: number;
}

/** The client's request as the surface validated it. */
export interface ClientRequest {
  /** The body: its raw bytes and its parsed JSON (identity translators forward the bytes). */
  body: JsonBody;
  /** Lower-cased request headers (anthropic-version / anthropic-beta for an Anthropic client). */
  headers: Record<string, string | undefined>;
}

/** The upstream call a translator built. The provider adds the path and the channel's credentials. */
export interface UpstreamCall {
  body: string | Buffer;
  /** Protocol headers besides the credentials (e.g. anthropic-version). */
  headers?: Record<string, string>;
  /** A 403 from the upstream answers something the caller asked for (an anthropic-beta): the caller's error. */
  forbiddenIsCallers?: boolean;
  /** The upstream operation called, when not the surface's (a Responses request passed to a native Responses channel). */
  operation?: Operation;
  /**
   * Request fields or tools left out or degraded for this upstream (a DropRecord's list): answered
   * as the `x-service-dropped` header and kept on the attempt in the request log.
   */
  dropped?: readonly string[];
}

/**
 * Token counts as the upstream reported them, in billing terms (every reader is in
 * translate/usage.ts). `promptTokens` excludes the cache tokens (each class is billed at its own
 * price): from OpenAI's usage it is prompt_tokens minus prompt_tokens_details.cached_tokens; from
 * Gemini's, promptTokenCount minus cachedContentTokenCount. The UsageSplit shares (1-hour cache
 * writes, reasoning, audio and image tokens) are parts of those totals, priced apart where the
 * model's price list has a price for them.
 */
export interface UpstreamUsage extends UsageSplit {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** False while a stream's completion count may still grow (Anthropic's message_start). */
  completionFinal: boolean;
  /** The service tier served, when priced apart (OpenAI's flex and priority, Anthropic's priority). */
  serviceTier?: PricedServiceTier;
}

/** What the pipeline settled, for the bytes a translator writes last. */
export interface Settlement {
  /** The usage billed (the upstream's, or our estimate where it gave none), with its shares for the client's usage details. */
  usage: UsageSplit & { promptTokens: number; completionTokens: number; cacheReadTokens: number; cacheWriteTokens: number; reasoningTokens: number };
  /** Built-in tool calls billed (Anthropic's `usage.server_tool_use`). */
  toolCalls?: ToolCalls;
  /** Exact decimal texts, written as JSON numbers (never through a float). */
  costUsd: string;
  costCny: string;
  /** The channel that served and the latency so far, for OpenAI's `service` member. */
  channel: string;
  latencyMs: number;
}

/** A whole (non-stream) upstream reply, translated. */
export interface TranslatedReply {
  /** The upstream's usage; null when it reported none (the pipeline then estimates). */
  usage: UpstreamUsage | null;
  /** The generated text (content, tool arguments, thinking): what an estimate counts (read only then, so it may be computed when read). */
  readonly completion: string;
  /** The client's reply body, once the cost is known. */
  render(settled: Settlement): string;
  /** Built-in tool calls the upstream made (billed per call when the request asked for the tool). */
  readonly toolCalls?: ToolCalls;
}

/** One server-sent event of the upstream's stream. */
export interface SseEvent {
  /** `event:` field ('message' when absent). */
  event: string;
  /** `data:` lines joined with '\n'. */
  data: string;
  /** The event's text as received, terminated by a blank line: identity translators forward it. */
  raw: string;
}

/** Translates one upstream stream into the client's, event by event. */
export interface StreamTranslator {
  /**
   * One upstream event -> the client's bytes to send now ('' for none). Throws
   * UpstreamFailure('status') on an upstream error event, UpstreamFailure('protocol') on garbage.
   */
  push(ev: SseEvent): string;
  /** The usage reported so far (null: none yet). */
  readonly usage: UpstreamUsage | null;
  /** The generated text so far: what an estimate counts. */
  readonly completion: string;
  /** The upstream said the reply is complete (finish_reason / [DONE], message_stop, a finishReason). */
  readonly finished: boolean;
  /** Built-in tool calls the upstream made so far (billed per call when the request asked for the tool). */
  readonly toolCalls?: ToolCalls;
  /** The bytes that end a complete stream for the client (e.g. the usage chunk and [DONE]). */
  end(settled: Settlement): string;
}

/** An upstream's 4xx (the caller's error) in the client's envelope, the status class kept. */
export interface TranslatedError {
  status: number;
  body: string;
}

export interface Translator {
  /**
   * The upstream call for this client request. Throws GatewayError('invalid_request', …, {param})
   * for what the upstream cannot carry (n > 1 to Anthropic, audio input): a 400 naming the
   * parameter and the model, before anything goes upstream.
   */
  request(req: ClientRequest, call: CallInfo): UpstreamCall;
  /** A whole reply (status < 400). Throws UpstreamFailure('protocol') when it is unusable. */
  response(text: string, call: CallInfo): TranslatedReply;
  /** A fresh transformer for one streamed reply. */
  stream(call: CallInfo, req: ClientRequest): StreamTranslator;
  /** An upstream 4xx body (other than the channel's own faults) in the client's envelope. */
  error(status: number, text: string): TranslatedError;
}

export type { JsonObject };
