// The one /v1 pipeline: plan (the model and its fallbacks) -> admit (one Redis round trip) ->
// channel loop with fallback before the first byte -> upstream call -> relay (JSON or stream,
// through the pair's translator) -> the answer (answer.ts: settled, headers, the stream's end), then
// the handler's finish (context.ts: release, log). Surfaces only validate their input and say
// which translator serves each upstream protocol; the pipeline never asks which protocols meet.
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import type { Principal } from '@/lib/auth/principal';
import { GatewayError } from '@/lib/errors';
import { maxCostOf } from '@/lib/billing/cost';
import { formatMoney } from '@/lib/format';
import { Unaffordable } from '@/lib/auth/admission';
import { affordableOutputTokens, MIN_CLAMPED_OUTPUT_TOKENS, withBody, type OutputCap } from '@/lib/gateway/admission/clamp';
import type { Endpoint } from '@/lib/gateway/admission';
import { channelLimited } from '@/lib/gateway/admission/channel';
import { preAdmission } from '@/lib/gateway/account-gate';
import { keyedRandom, maxContextWindow, orderChannels, resolveModel, AUTO_MODEL, type ModelPlan, type RequestNeeds } from '@/lib/gateway/router';
import { providers, type Operation, type Provider } from '@/lib/gateway/providers';
import { classify, readUpstreamBody, redactUpstreamText, type UpstreamResponse } from '@/lib/gateway/upstream';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { promptTokenBound } from '@/lib/gateway/tokens';
import { SseEventReader } from '@/lib/gateway/sse';
import { clientGone, open, type RequestContext } from '@/lib/gateway/context';
import { answer, endStream, fromCache, NOTHING_GENERATED, settle, settlement, startStream } from '@/lib/gateway/answer';
import { AttemptTracker, callChannel } from '@/lib/gateway/call-channel';
import { outputTokensOf } from '@/lib/gateway/settlement';
import * as record from '@/lib/gateway/record';
import { operationOf } from '@/lib/telemetry/tracing';
import { pricedFor, toolReservation, unpricedTool, type BuiltInToolUse } from '@/lib/gateway/builtin-tools';
import type { CallInfo, ClientRequest, Translator, TranslatedReply, UpstreamCall, UpstreamProtocol } from '@/lib/gateway/translate/types';
import { mergeDropped } from '@/lib/gateway/translate/dropped';
import { startAbortDrain, trackStream } from '@/lib/shutdown';
import type { ClientSignal, GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { cacheAsk, cacheKey, hitCost, lookup, remember, ReplyRecorder, type CacheAsk, type CachedReply } from '@/lib/gateway/response-cache';
import { affinityKey, conversationOf, pin, pinnedChannel, preferPinned } from '@/lib/cache/affinity';
import { inRegion, REGION_HEADER, regionUnavailable, requestRegion } from '@/lib/region';

/**
 * The most an upstream stream may send: 64 MiB, and 1 KiB more per output token reserved. A real
 * stream sends a few hundred bytes per token (an event per delta; with logprobs, a few KB for some),
 * plus a terminal event that repeats the output; an upstream that streams on and on (an endless
 * stream) would otherwise grow what the reply keeps (the completion counted for an estimate, a
 * Responses output stored) without limit. Past it the stream ends with an error event, billed for
 * what was generated (at most the output reserved).
 */
export function streamByteBound(outputTokens: number): number {
  return 64 * 1024 * 1024 + outputTokens * 1024;
}

/** What a surface found in a valid request: all the pipeline needs to plan, admit and relay it. */
export interface PreparedRequest {
  stream: boolean;
  /** The output cap the client asked for (undefined: the model's own maximum is reserved). */
  maxOutputTokens?: number;
  /** The size of the prompt as it goes upstream, when it is not the body's (a stored conversation prepended). */
  promptBytes?: number;
  /**
   * The field named when the upstream body outgrows the body cap, when it is not the body's largest
   * (the Responses surface's `previous_response_id`, whose stored conversation is prepended).
   */
  grownBy?: string;
  /** Completions asked for (`n`): each may produce up to the output cap. */
  choices: number;
  /** Reserved and billed (false: count_tokens, which is admitted and logged but free). */
  billed: boolean;
  /** Only the requested model may answer (a token count of another model would be wrong). */
  noFallback?: boolean;
  /** What service-auto weighs; asked only when the client chose service-auto. */
  autoNeeds?: (countLimit: number, signal: ClientSignal) => Promise<RequestNeeds>;
  /** The largest upstream reply read whole for `model`, when this request bounds it below the surface's `maxReplyBytes`. */
  maxReplyBytes?(model: ModelInfo): number;
  /** Built-in tools its upstream bills per call (web search, code execution, …): priced, reserved and billed. */
  builtInTools?: BuiltInToolUse[];
  /**
   * The channels that run those tools (Responses: native channels; the mirror: Anthropic's). On a
   * model no such channel serves, the translation drops them: nothing to price there.
   */
  builtInToolsRunOn?(channel: ChannelInfo): boolean;
  /** Our count of the prompt, for a reply whose upstream reported no usage. */
  estimatePrompt(): Promise<number>;
  /**
   * The translator from this surface to a channel's protocol (undefined: such channels cannot serve
   * it). The channel is given for what its protocol alone does not say (a native Responses upstream).
   */
  translator(protocol: UpstreamProtocol, model: ModelInfo, channel: ChannelInfo): Translator | undefined;
  /** An answer made here, for a model no channel can answer this operation for (count_tokens off Anthropic). */
  local?(model: ModelInfo): Promise<string>;
  /** A mid-stream error in the surface's own stream format (default: a chat chunk `data: {"error":…}`). */
  streamError?(err: GatewayError): string;
  /** Awaited after the reply's last bytes are rendered, before they are sent (the Responses surface stores the response). */
  beforeEnd?(model: ModelInfo): Promise<void>;
  /** The model, when the client names it outside the body (Gemini's path). */
  model?: string;
  /** The content type of a stream, when not SSE (Gemini's JSON-array stream). */
  streamContentType?: string;
  /** What the surface itself dropped from the request, whatever the channel (merged with the translator's UpstreamCall.dropped). */
  dropped?: readonly string[];
  /**
   * A conversation's key (the account and a `prompt_cache_key`): the channels of a priority are
   * then ordered by it rather than at random, so the conversation stays on one channel while it is
   * healthy (the usual fallback order after it).
   */
  affinity?: string;
}

/** A client surface: what it speaks, and how it reads a request. */
export interface SurfaceSpec {
  /** The admission endpoint: which limits apply. */
  endpoint: Endpoint;
  operation: Operation;
  kind: ModelInfo['kind'];
  /** Where this surface's clients list their models (named when a model is unknown). */
  modelsPath: string;
  /** The status of an unknown model, when not the OpenAI surface's 400 (Anthropic answers 404 not_found_error). */
  modelNotFoundStatus?: number;
  /** The largest upstream reply read whole. */
  maxReplyBytes: number;
  /** Where its output cap is, for a request lowered to fit its budget (admission/clamp.ts); none: never lowered. */
  outputCap?: OutputCap;
  /**
   * Checks the body (a 400 naming the field otherwise) and says what the request needs. Work beyond
   * the body itself (a read of the store) is done in one of the account's turns (account-gate.ts);
   * `signal` is the client's.
   */
  validate(req: ClientRequest, cfg: GatewayConfig, principal: Principal, bodyBytes: number, signal: ClientSignal): Promise<PreparedRequest> | PreparedRequest;
}

/** Runs one /v1 request on `surface`. Errors are thrown to the handler, which answers them in the surface's envelope. */
export async function runPipeline(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink, surface: SurfaceSpec): Promise<void> {
  const body = await open(ctx, req);
  let client: ClientRequest = { body, headers: req.headers };
  const principal = ctx.principal!;
  const ask = cacheAsk(req, ctx.cfg, principal);
  const before = await prepare(ctx, req, surface, client, ask);
  if (before.hit) return serveHit(ctx, sink, surface, before.prepared, client, before.hit);
  let { prepared, calls } = before;
  const { plan, first, translated, cache, affinity } = before;
  if (!translated && prepared.local && !plan.models.some((m) => translatorFor(prepared, m, channelsOf(ctx, m)))) {
    await admit(ctx, prepared, null, surface.endpoint, 0n, 0);
    const text = await prepared.local(plan.models[0]);
    answer(ctx, sink, 200, text, { 'content-type': 'application/json' });
    return;
  }

  for (let lowered = 0; ; lowered++) {
    try {
      const bytes = prepared.promptBytes ?? client.body.raw.length;
      await admit(
        ctx,
        prepared,
        prepared.billed ? plan.models[0] : null,
        surface.endpoint,
        prepared.billed ? reservation(plan.models, prepared, bytes) : 0n,
        prepared.billed ? tokenReservation(plan.models, prepared, bytes) : 0,
        firstChannel(prepared, plan.models[0], first),
      );
      break;
    } catch (err) {
      // Over the key budget or balance at its largest reply: the same request with a lower output
      // cap (admission/clamp.ts), validated and translated again. Twice at most (budget, then balance).
      const cap = surface.outputCap;
      if (!(err instanceof Unaffordable) || !cap || !prepared.billed || plan.models.some((m) => m.kind !== 'chat')) throw err;
      // Bytes for the cap field the body gains, so that the lowered request fits at its own bound.
      const promptBound = promptTokenBound((prepared.promptBytes ?? client.body.raw.length) + 64);
      const tools = prepared.builtInTools;
      const tokens = affordableOutputTokens(plan.models, promptBound, prepared.choices, prepared.maxOutputTokens, err.available, (m) =>
        tools ? toolReservation(m, tools) : 0n,
      );
      if (!ctx.cfg.clampOutputToBudget || tokens < MIN_CLAMPED_OUTPUT_TOKENS || lowered >= 2) throw err.naming(cap.field, tokens);
      client = withBody(client, cap.set(client.body.json, tokens, plan.models[0]));
      const again = surface.validate(client, ctx.cfg, principal, client.body.raw.length, req.signal);
      prepared = again instanceof Promise ? await again : again;
      calls = new CallCache(client, ctx, prepared);
      const translator = translatorFor(prepared, plan.models[0], first);
      if (translator) calls.get(plan.models[0], translator);
      record.clamped(
        ctx.rec,
        tokens,
        `output capped at ${tokens} tokens (${err.code === 'key_budget_exceeded' ? 'key budget' : 'balance'} left: ${formatMoney(err.available)})`,
      );
    }
  }

  let refusal: GatewayError | null = null;
  for (let i = 0; i < plan.models.length; i++) {
    const model = plan.models[i];
    for (const channel of i === 0 ? first : channelOrder(ctx, prepared, model)) {
      const translator = prepared.translator(channel.protocol, model, channel);
      if (!translator) continue;
      let call: TranslatedCall;
      try {
        call = calls.get(model, translator);
      } catch (err) {
        // A fallback whose protocol cannot carry the request is skipped; the refusal is the answer
        // only if nothing else could be tried.
        if (!(err instanceof GatewayError)) throw err;
        refusal ??= err;
        continue;
      }
      if (await attempt(ctx, req, sink, surface, prepared, client, call, channel, cache, model === plan.models[0] ? affinity : undefined)) return;
    }
  }
  record.unserved(ctx.rec, plan.models[0]);
  const atCap = ctx.gate.channelsAtCap(ctx.rec.attempts.length);
  if (atCap) throw atCap;
  if (refusal && ctx.rec.attempts.length === 0) throw refusal;
  if (ctx.rec.region !== null)
    throw regionUnavailable(
      ctx.rec.region,
      plan.models.map((m) => m.name),
    );
  throw new GatewayError('all_channels_failed', `All upstream channels failed for ${plan.models.map((m) => m.name).join(', ')}.`);
}

/**
 * The channels of `model` in the order they are tried. A conversation's key (`affinity`) orders the
 * channels of a priority by its hash rather than at random, so the conversation stays on one channel.
 */
function channelOrder(ctx: RequestContext, prepared: PreparedRequest, model: ModelInfo) {
  return prepared.affinity
    ? orderChannels(channelsOf(ctx, model), Date.now(), keyedRandom(`${prepared.affinity}\0${model.name}`))
    : orderChannels(channelsOf(ctx, model));
}

/** A reply found in the response cache, and how to replay it (the translator its miss went through). */
interface CacheHit {
  entry: CachedReply;
  model: ModelInfo;
  translator: Translator;
}

/** A conversation's pin (lib/cache/affinity.ts): its store key and the channel it held when the request came. */
interface Affinity {
  key: string;
  pinned: string | null;
}

/** Where an opted-in request's reply is stored on a miss. */
interface CacheMiss {
  key: string;
  ttlMs: number;
}

/** The stored reply for this request, when there is one this configuration can still replay. */
async function cachedReply(ctx: RequestContext, prepared: PreparedRequest, plan: ModelPlan, key: string): Promise<CacheHit | null> {
  const entry = await lookup(ctx.cfg, key);
  if (!entry || entry.stream !== prepared.stream) return null;
  const model = plan.models.find((m) => m.name === entry.model);
  const channel = ctx.cfg.channels.find((c) => c.name === entry.channel);
  if (!model || !channel || channel.protocol !== entry.protocol) return null;
  // A reply made out of the request's region is not served to it.
  if (ctx.rec.region !== null && channel.region !== ctx.rec.region) return null;
  const translator = prepared.translator(channel.protocol, model, channel);
  return translator ? { entry, model, translator } : null;
}

/** A request validated, its models planned and its first upstream call translated: the work before admission. */
async function prepare(ctx: RequestContext, req: GatewayRequest, surface: SurfaceSpec, client: ClientRequest, ask: CacheAsk | null) {
  const principal = ctx.principal!;
  const validated = surface.validate(client, ctx.cfg, principal, client.body.raw.length, req.signal);
  const prepared = validated instanceof Promise ? await validated : validated;
  record.streaming(ctx.rec, prepared.stream);
  if (prepared.model !== undefined) record.askedFor(ctx.rec, prepared.model);
  const requested = prepared.model ?? client.body.json.model;
  // service-auto's count is the costly part of preparing a chat request: one of the account's turns.
  const autoNeeds = requested === AUTO_MODEL ? prepared.autoNeeds?.bind(prepared) : undefined;
  const needs = autoNeeds ? await preAdmission(principal.userId, req.signal, () => autoNeeds(maxContextWindow(ctx.cfg), req.signal)) : undefined;
  const plan = planModels(ctx.cfg, surface, requested, principal, needs);
  // Where it may be served: the pin, or what the request asks (lib/gateway/region.ts). No channel of
  // that region for any planned model: refused before anything is admitted, never routed elsewhere.
  const region = requestRegion(req.headers[REGION_HEADER], client.body.json, principal.regionPin ?? {});
  record.planned(ctx.rec, ctx.rec.model, region);
  if (region !== null && !plan.models.some((m) => channelsOf(ctx, m).length > 0)) {
    throw regionUnavailable(
      region,
      plan.models.map((m) => m.name),
    );
  }
  if (prepared.noFallback) plan.models.length = 1;
  const tools = prepared.builtInTools;
  if (tools?.length) {
    // A tool the operator has no price for is never served (its fee would be the operator's):
    // refused for the model asked for, skipped among its fallbacks. A model whose channels cannot
    // run the tools gets the request without them (x-service-dropped): no fee to price.
    const runOn = prepared.builtInToolsRunOn?.bind(prepared);
    const runs = (m: ModelInfo) => !runOn || channelsOf(ctx, m).some(runOn);
    const refusal = runs(plan.models[0]) ? unpricedTool(plan.models[0], tools) : undefined;
    if (refusal) throw refusal;
    plan.models = plan.models.filter((m) => !runs(m) || pricedFor(m, tools));
  }
  if (plan.reason !== null) record.routeNote(ctx.rec, plan.reason, true);
  record.planned(ctx.rec, plan.models[0]);

  // The response cache (opted in): a hit is answered without any upstream work (lib/cache/).
  let cache: CacheMiss | undefined;
  if (ask && prepared.billed && !prepared.local) {
    cache = { key: cacheKey(principal.userId, ctx.rec.endpoint, plan.models[0], prepared.stream, client.body.json), ttlMs: ask.ttlMs };
    const hit = await cachedReply(ctx, prepared, plan, cache.key);
    if (hit) return { prepared, plan, hit } as const;
    record.cacheAnswer(ctx.rec, 'miss');
  }

  const calls = new CallCache(client, ctx, prepared);
  let first = channelOrder(ctx, prepared, plan.models[0]);
  // Cache-aware routing: the conversation's channel first while it is healthy (lib/cache/affinity.ts).
  let affinity: Affinity | undefined;
  const conversation = first.length > 1 && ctx.cfg.cacheAffinity.enabled ? conversationOf(req.headers, client.body.json) : undefined;
  if (conversation) {
    const key = affinityKey(principal.userId, plan.models[0].name, conversation);
    affinity = { key, pinned: await pinnedChannel(key) };
    const kept = preferPinned(first, affinity.pinned);
    first = kept.channels;
    if (kept.kept) record.routeNote(ctx.rec, `conversation kept on channel ${first[0].name} (cache affinity)`);
  }
  // The first attempt's translation happens before admission: a parameter the upstream cannot
  // carry (or a body it would grow past the cap) is the client's 400, with nothing admitted or sent.
  const firstTranslator = translatorFor(prepared, plan.models[0], first);
  if (firstTranslator) calls.get(plan.models[0], firstTranslator);
  return { prepared, plan, first, calls, translated: firstTranslator !== undefined, cache, affinity, hit: undefined };
}

/** The translator of the first of `channels` that can serve `model` for this request. */
function translatorFor(prepared: PreparedRequest, model: ModelInfo, channels: ChannelInfo[]): Translator | undefined {
  for (const c of channels) {
    const t = prepared.translator(c.protocol, model, c);
    if (t) return t;
  }
  return undefined;
}

/** The channels that may serve `model` for this request: its region's only, when one applies. */
function channelsOf(ctx: RequestContext, model: ModelInfo): ChannelInfo[] {
  return inRegion(ctx.cfg.channelsByModel.get(model.name) ?? [], ctx.rec.region);
}

/** The model and its fallbacks (`needs`: what service-auto weighs); an unknown model is answered as the surface's clients expect. */
function planModels(cfg: GatewayConfig, surface: SurfaceSpec, requested: unknown, principal: Principal, needs: RequestNeeds | undefined): ModelPlan {
  try {
    return resolveModel(cfg, requested, principal.tier, surface.kind, needs, principal.guard?.models);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'model_not_found') {
      throw new GatewayError('model_not_found', err.message.replace('GET /v1/models', `GET ${surface.modelsPath}`), {
        status: surface.modelNotFoundStatus,
        param: 'model',
      });
    }
    throw err;
  }
}

/** The balance reserved: the most any planned model can cost for this prompt and output cap. */
function reservation(models: ModelInfo[], prepared: PreparedRequest, bodyBytes: number): bigint {
  const promptBound = promptTokenBound(bodyBytes);
  let reserve = 0n;
  for (const m of models) {
    let c = maxCostOf(m, promptBound, outputTokensOf(m, prepared));
    if (prepared.builtInTools) c += toolReservation(m, prepared.builtInTools);
    if (c > reserve) reserve = c;
  }
  return reserve;
}

/**
 * The tokens a request's tokens-per-minute limits reserve: the prompt's bound (as the balance
 * reservation's: never under the real count, so a limit is never crossed by a settlement) and the
 * largest output of any planned model. Settled to what was used after the reply.
 */
function tokenReservation(models: ModelInfo[], prepared: PreparedRequest, bodyBytes: number): number {
  let output = 0;
  for (const m of models) output = Math.max(output, outputTokensOf(m, prepared));
  return promptTokenBound(bodyBytes) + output;
}

/** The channel the first attempt will take, when it has limits of its own (taken alongside the admission). */
function firstChannel(prepared: PreparedRequest, model: ModelInfo, channels: ChannelInfo[]): ChannelInfo | undefined {
  if (!channels.some(channelLimited)) return undefined;
  for (const c of channels) if (prepared.translator(c.protocol, model, c)) return channelLimited(c) ? c : undefined;
  return undefined;
}

/** One translated upstream call: what a translator built for one model, and the facts it was built on. */
interface TranslatedCall {
  model: ModelInfo;
  translator: Translator;
  info: CallInfo;
  upstream: UpstreamCall;
}

/**
 * Upstream calls built by translators, one per (model, translator): channels served alike share it.
 * Most requests build one, kept in a field; fallbacks across models or protocols add to a list.
 */
class CallCache {
  private first: TranslatedCall | null = null;
  private more: TranslatedCall[] | null = null;

  constructor(
    private readonly client: ClientRequest,
    private readonly ctx: RequestContext,
    private readonly prepared: PreparedRequest,
  ) {}

  get(model: ModelInfo, translator: Translator): TranslatedCall {
    const first = this.first;
    if (first && first.model === model && first.translator === translator) return first;
    if (this.more) for (const c of this.more) if (c.model === model && c.translator === translator) return c;
    const info = first?.model === model ? first.info : this.infoFor(model);
    const upstream = translator.request(this.client, info);
    checkUpstreamSize(upstream.body, this.ctx.cfg.limits.max_body_bytes, this.client, this.prepared);
    const call: TranslatedCall = { model, translator, info, upstream };
    if (!first) this.first = call;
    else (this.more ??= []).push(call);
    return call;
  }

  private infoFor(model: ModelInfo): CallInfo {
    if (this.more) for (const c of this.more) if (c.model === model) return c.info;
    const ctx = this.ctx;
    return { model, stream: this.prepared.stream, requestId: ctx.rec.requestId, created: Math.floor(ctx.rec.startedAt / 1000) };
  }
}

/**
 * No translation sends more than a client may: an upstream body over the body cap (a schema
 * inlined, a stored conversation prepended, content parts rewritten) is the client's 400, naming
 * the field that grew it, before anything is admitted or sent. Bodies forwarded as they came
 * are within the cap already; a string under a third of it is too, whatever its characters.
 */
function checkUpstreamSize(body: string | Buffer, maxBytes: number, client: ClientRequest, prepared: PreparedRequest): void {
  if (body === client.body.raw) return;
  const bytes = typeof body === 'string' ? (body.length * 3 <= maxBytes ? 0 : Buffer.byteLength(body)) : body.length;
  if (bytes <= maxBytes) return;
  const field = prepared.grownBy ?? largestField(client.body.json);
  throw new GatewayError(
    'invalid_request',
    `The request is too large once translated for this model's upstream: ${bytes} bytes, over the ${maxBytes}-byte limit. \`${field}\` makes most of it.`,
    { param: field },
  );
}

/** The top-level field of the client's body with the longest JSON. */
function largestField(json: Record<string, unknown>): string {
  let best = 'messages';
  let size = -1;
  for (const [k, v] of Object.entries(json)) {
    const n = JSON.stringify(v)?.length ?? 0;
    if (n > size) [best, size] = [k, n];
  }
  return best;
}

// The headers of an upstream call: the JSON content type, the protocol's own (from the translator)
// and the channel's key. Without protocol headers they are the same for every call on a channel.
const JSON_CONTENT = { 'content-type': 'application/json' } as const;
const channelHeaders = new WeakMap<ChannelInfo, Record<string, string>>();

function upstreamHeaders(channel: ChannelInfo, provider: Provider, own: Record<string, string> | undefined): Record<string, string> {
  if (own) return { ...JSON_CONTENT, ...own, ...provider.auth(channel.apiKey) };
  let headers = channelHeaders.get(channel);
  if (!headers) channelHeaders.set(channel, (headers = { ...JSON_CONTENT, ...provider.auth(channel.apiKey) }));
  return headers;
}

/** The admission of the request (admission/gate.ts): its limits, the balance and the tokens reserved. */
function admit(
  ctx: RequestContext,
  prepared: PreparedRequest,
  model: ModelInfo | null,
  endpoint: Endpoint,
  reserve: bigint,
  tokens: number,
  first?: ChannelInfo,
) {
  return ctx.gate.admit({
    principal: ctx.principal!,
    cfg: ctx.cfg,
    model,
    endpoint,
    reserve,
    tokens,
    ip: ctx.keyIp,
    stream: prepared.stream,
    firstChannel: first,
    trace: ctx.trace,
  });
}

/** One upstream try. Returns true when the request was answered (success or a non-retryable error). */
async function attempt(
  ctx: RequestContext,
  req: GatewayRequest,
  sink: ResponseSink,
  surface: SurfaceSpec,
  prepared: PreparedRequest,
  client: ClientRequest,
  call: TranslatedCall,
  channel: ChannelInfo,
  cache?: CacheMiss,
  affinity?: Affinity,
): Promise<boolean> {
  const { model, translator, info, upstream } = call;
  const provider = providers[channel.protocol];
  const path = provider.path(upstream.operation ?? surface.operation, model.name, prepared.stream);
  if (path === undefined) return false;
  const dropped = mergeDropped(prepared.dropped, upstream.dropped);
  // A channel at its own cap (concurrency, tokens per minute) is skipped: the next one is tried.
  if (!(await ctx.gate.takeChannel(channel, ctx.cfg))) return false;
  const tracker = new AttemptTracker(channel, model, ctx.cfg, ctx.principal?.userId);
  record.attemptStarted(ctx.rec, tracker.record);
  if (dropped) tracker.record.dropped = dropped;
  if (req.signal.aborted) throw clientGone();
  let headers = upstreamHeaders(channel, provider, upstream.headers);
  if (ctx.trace) {
    tracker.trace = ctx.trace.attempt(channel, model.name, operationOf(ctx.rec.endpoint, ctx.protocol.name), ctx.rec.attempts.length);
    headers = tracker.trace.inject(headers);
  }
  const gate = ctx.gate;
  const outcome = await callChannel({
    channel,
    provider,
    path,
    body: upstream.body,
    headers,
    signal: gate.signalFor(req.signal),
    client: req.signal,
    forbiddenIsCallers: upstream.forbiddenIsCallers,
    tracker,
    // While the admission is speculative, nothing of the reply is used until it is confirmed.
    gate: (res) => gate.confirm(res, () => tracker.cancel('cancelled: admission refused')),
  });
  if (outcome.kind === 'failed') {
    if (req.signal.aborted) throw clientGone();
    return false;
  }
  record.served(ctx.rec, channel, model, dropped);
  if (outcome.kind === 'rejected') {
    // The caller's mistake as the upstream sees it: answered in the client's envelope, not retried, not billed.
    const out = translator.error(outcome.status, outcome.text);
    record.failed(ctx.rec, 'upstream_rejected', out.status);
    answer(ctx, sink, out.status, out.body, { 'content-type': 'application/json', 'x-should-retry': 'false' });
    return true;
  }
  const res = outcome.res;
  // The channel served: the conversation is pinned to it (lib/cache/affinity.ts). A new pin is
  // stored before the reply's end reaches the client, so that the conversation's next request finds
  // it on any instance; the same pin is only refreshed (its TTL), without waiting.
  const served = affinity
    ? () => {
        const pinned = pin(ctx.cfg, affinity.key, channel.name);
        if (affinity.pinned === channel.name) return undefined;
        affinity.pinned = channel.name;
        return pinned;
      }
    : undefined;
  let ok: boolean;
  try {
    ok = prepared.stream
      ? await relayStream(ctx, req, sink, res, translator, client, info, prepared, tracker, channel, cache, served)
      : await relayJson(
          ctx,
          req,
          sink,
          res,
          translator,
          info,
          prepared,
          tracker,
          channel,
          prepared.maxReplyBytes?.(model) ?? surface.maxReplyBytes,
          cache,
          served,
        );
  } catch (err) {
    // Broke off after the first byte: no fallback any more, but the channel is unhealthy.
    tracker.fail(tracker.record.error ?? (err as Error).message);
    throw err;
  }
  if (!ok && !sink.started) {
    if (req.signal.aborted) throw clientGone();
    record.unserved(ctx.rec);
    return tracker.fail(tracker.record.error ?? 'upstream reply unusable');
  }
  tracker.finish(true, ok);
  return true;
}

const ONCE = { once: true };

/**
 * Watches the client while a reply is read. If it leaves, its concurrency slot is freed at once and
 * the reply is read on for its usage (billing), but only for a drain period (startAbortDrain).
 */
class ClientWatch {
  open = true;
  private stopDrain: (() => void) | undefined = undefined;

  constructor(
    private readonly ctx: RequestContext,
    private readonly req: GatewayRequest,
    private readonly res: UpstreamResponse,
  ) {
    if (req.signal.aborted) this.onAbort();
    else req.signal.addEventListener('abort', this.onAbort, ONCE);
  }

  private readonly onAbort = (): void => {
    this.open = false;
    record.clientClosed(this.ctx.rec);
    const body = this.res.body;
    this.stopDrain = startAbortDrain(() => body.destroy());
    this.ctx.gate.expire();
  };

  dispose(): void {
    this.stopDrain?.();
    this.req.signal.removeEventListener('abort', this.onAbort);
  }
}

async function relayJson(
  ctx: RequestContext,
  req: GatewayRequest,
  sink: ResponseSink,
  res: UpstreamResponse,
  translator: Translator,
  info: CallInfo,
  prepared: PreparedRequest,
  tracker: AttemptTracker,
  channel: ChannelInfo,
  maxReplyBytes: number,
  cache?: CacheMiss,
  served?: () => Promise<void> | undefined,
): Promise<boolean> {
  const client = new ClientWatch(ctx, req, res);
  let reply: TranslatedReply;
  let upstreamText: string;
  try {
    upstreamText = await readUpstreamBody(res.body, maxReplyBytes);
    reply = translator.response(upstreamText, info);
  } catch (err) {
    client.dispose();
    if (!client.open) {
      // Gone, and the reply never fully arrived: bill the prompt, as far as we know it.
      await settle(ctx, prepared, null, NOTHING_GENERATED);
      return true;
    }
    tracker.note(redactUpstreamText((err as Error).message, channel));
    return false;
  }
  client.dispose();
  const settled = settle(ctx, prepared, reply.usage, reply);
  const reasoning = typeof settled === 'number' ? settled : await settled;
  record.firstToken(ctx.rec);
  if (!client.open) return true;
  const text = reply.render(settlement(ctx, reasoning));
  const pinned = served?.();
  if (pinned) await pinned;
  if (prepared.beforeEnd) await prepared.beforeEnd(info.model);
  // A known length lets node send the reply in one write instead of chunked framing.
  answer(ctx, sink, 200, text, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  if (cache && ctx.rec.outputClamped === null) remember(ctx.cfg, cache.key, cache.ttlMs, storedReply(channel, info, false, upstreamText));
  return true;
}

function storedReply(channel: ChannelInfo, info: CallInfo, stream: boolean, body: string): CachedReply {
  return { v: 1, protocol: channel.protocol, channel: channel.name, model: info.model.name, stream, body, at: Date.now(), requestId: info.requestId };
}

/**
 * Answers from the response cache: admitted (authenticated already; the request counted against
 * its rates, the balance reserved at the hit's price; no channel, no upstream token reservation),
 * the stored upstream reply replayed through its translator (a stream as a stream, in the
 * client's protocol, with this request's ids), billed at the operator's fraction and logged.
 */
async function serveHit(ctx: RequestContext, sink: ResponseSink, surface: SurfaceSpec, prepared: PreparedRequest, client: ClientRequest, hit: CacheHit) {
  const { entry, model, translator } = hit;
  const billedNano = ctx.cfg.responseCache.billedNano;
  record.cacheAnswer(ctx.rec, 'hit');
  record.planned(ctx.rec, model);
  record.routeNote(ctx.rec, `response cache hit (stored by ${entry.requestId} from channel ${entry.channel})`);
  const bytes = prepared.promptBytes ?? client.body.raw.length;
  await admit(
    ctx,
    prepared,
    prepared.billed ? model : null,
    surface.endpoint,
    prepared.billed ? hitCost(reservation([model], prepared, bytes), billedNano) : 0n,
    0,
  );
  await ctx.gate.confirm();
  fromCache(ctx, billedNano);
  const info: CallInfo = { model, stream: prepared.stream, requestId: ctx.rec.requestId, created: Math.floor(ctx.rec.startedAt / 1000) };
  if (!prepared.stream) {
    const reply = translator.response(entry.body, info);
    const settled = settle(ctx, prepared, reply.usage, reply);
    const reasoning = typeof settled === 'number' ? settled : await settled;
    record.firstToken(ctx.rec);
    const text = reply.render(settlement(ctx, reasoning));
    if (prepared.beforeEnd) await prepared.beforeEnd(model);
    answer(ctx, sink, 200, text, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    return;
  }
  const st = translator.stream(info, client);
  let out = '';
  for (const ev of new SseEventReader().push(Buffer.from(entry.body))) out += st.push(ev);
  startStream(ctx, sink, prepared);
  if (out) await sink.write(out);
  const settled = settle(ctx, prepared, st.usage, st);
  const reasoning = typeof settled === 'number' ? settled : await settled;
  const tail = st.end(settlement(ctx, reasoning));
  if (prepared.beforeEnd) await prepared.beforeEnd(model);
  endStream(ctx, sink, tail);
}

/**
 * Relays a stream event by event as the upstream sends it, through the translator.
 * Returns false only when the upstream failed before anything reached the client (fallback is allowed).
 */
async function relayStream(
  ctx: RequestContext,
  req: GatewayRequest,
  sink: ResponseSink,
  res: UpstreamResponse,
  translator: Translator,
  clientReq: ClientRequest,
  info: CallInfo,
  prepared: PreparedRequest,
  tracker: AttemptTracker,
  channel: ChannelInfo,
  cache?: CacheMiss,
  served?: () => Promise<void> | undefined,
): Promise<boolean> {
  const reader = new SseEventReader();
  const st = translator.stream(info, clientReq);
  const client = new ClientWatch(ctx, req, res);
  const recorder = cache ? new ReplyRecorder(ctx.cfg.responseCache.maxEntryBytes) : undefined;
  const startClient = () => {
    if (!sink.started) startStream(ctx, sink, prepared);
  };

  // Shutdown's cut-off (route-handler path) may end this stream: its upstream read stops here.
  const untrack = trackStream(() => res.body.destroy());
  const maxBytes = streamByteBound(outputTokensOf(info.model, prepared));
  let received = 0;
  try {
    for await (const chunk of res.body) {
      // Leaving the loop by a throw stops the reply: the upstream connection is dropped.
      if ((received += chunk.length) > maxBytes) throw new UpstreamFailure('protocol', `upstream stream longer than ${maxBytes} bytes`);
      recorder?.push(chunk);
      let out = '';
      for (const ev of reader.push(chunk)) out += st.push(ev);
      if (out && client.open) {
        startClient();
        await sink.write(out);
      }
    }
  } catch (err) {
    client.dispose();
    if (!client.open) {
      await settle(ctx, prepared, st.usage, st);
      return true;
    }
    // An upstream error event's text goes to the log and to the client: never the channel's key.
    const broke = redactUpstreamText(classify(err).message, channel);
    tracker.note(broke);
    if (!sink.started) return false;
    await settle(ctx, prepared, st.usage, st);
    record.upstreamBroke(ctx.rec);
    throw new GatewayError('upstream_error', `The upstream stream broke off: ${broke}`);
  } finally {
    untrack();
  }
  client.dispose();
  if (!client.open) {
    await settle(ctx, prepared, st.usage, st);
    return true;
  }
  if (!sink.started && !st.finished) {
    tracker.note('upstream stream ended without data');
    return false;
  }
  const settled = settle(ctx, prepared, st.usage, st);
  const reasoning = typeof settled === 'number' ? settled : await settled;
  startClient();
  if (!st.finished) {
    tracker.note('upstream stream ended before the reply was complete');
    record.upstreamBroke(ctx.rec);
    throw new GatewayError('upstream_error', 'The upstream stream ended before the reply was complete.');
  }
  const tail = st.end(settlement(ctx, reasoning));
  const pinned = served?.();
  if (pinned) await pinned;
  if (prepared.beforeEnd) await prepared.beforeEnd(info.model);
  endStream(ctx, sink, tail);
  const recorded = recorder?.text();
  if (cache && recorded && ctx.rec.outputClamped === null) remember(ctx.cfg, cache.key, cache.ttlMs, storedReply(channel, info, true, recorded));
  return true;
}
