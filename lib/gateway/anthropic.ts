// The Anthropic Messages mirror: POST /v1/anthropic/v1/messages(/count_tokens).
// The request body goes upstream byte for byte (cache_control and unknown fields included), with
// the caller's anthropic-version / anthropic-beta headers and the channel's own key. Same limits,
// reservation, fallback-before-the-first-byte, circuit breaker and billing as /v1/chat/completions.
import type { ChannelInfo, ModelInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { maxCostOf, noUsage, usageCount, type Usage } from '@/lib/billing/cost';
import { optionalBoolean, invalidField, upstreamBody, type JsonObject } from '@/lib/gateway/body';
import { maxContextWindow, resolveModel, orderChannels, AUTO_MODEL, type ModelPlan } from '@/lib/gateway/router';
import { callUpstream, readUpstreamBody, UpstreamFailure, classify, type UpstreamResponse } from '@/lib/gateway/upstream';
import { countMessageTokens, countTokens, promptTokenBound, textOf } from '@/lib/gateway/tokens';
import { SseLineSplitter } from '@/lib/gateway/sse';
import type { RequestContext } from '@/lib/gateway/context';
import { startAbortDrain, trackStream } from '@/lib/shutdown';
import type { ClientSignal, GatewayRequest, ResponseSink } from '@/lib/gateway/types';

const MAX_REPLY_BYTES = 32 * 1024 * 1024;
const MAX_ERROR_BYTES = 1024 * 1024;
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
const MESSAGES_PATH = '/v1/messages';
const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

type Attempt = RequestContext['attempts'][number];

// ---------------------------------------------------------------------------------------------
// Entry points

export function anthropicMessages(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  return guarded(ctx, req, sink, messages);
}

export function anthropicCountTokens(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  return guarded(ctx, req, sink, countTokensRoute);
}

/**
 * Every answer of the mirror, errors included, carries `request-id` (the header Anthropic's SDK
 * reads into `requestID`). Errors are answered here through the same ctx.fail the handler uses,
 * so that they go out through the wrapped sink; a client that left before anything was sent is
 * left to the handler, as on every other route.
 */
async function guarded(
  ctx: RequestContext,
  req: GatewayRequest,
  sink: ResponseSink,
  route: (ctx: RequestContext, req: GatewayRequest, sink: ResponseSink) => Promise<void>,
): Promise<void> {
  const out: ResponseSink = {
    get started() {
      return sink.started;
    },
    start: (status, headers) => sink.start(status, { ...headers, 'request-id': ctx.requestId }),
    write: (chunk) => sink.write(chunk),
    end: (chunk, trailers) => sink.end(chunk, trailers),
  };
  try {
    await route(ctx, req, out);
  } catch (err) {
    if (req.signal.aborted && !sink.started) throw err;
    await ctx.fail(out, err);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation and model resolution

function requireModelField(body: JsonObject): string {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalidField('model', 'model: Field required (a model name string).');
  return model;
}

function requireMessages(body: JsonObject): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalidField('messages', 'messages: must be a non-empty array of messages.');
  messages.forEach((m, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalidField(`messages.${i}`, `messages.${i}: must be an object.`);
  });
}

/** Minimal checks before anything goes upstream; the upstream validates the rest. */
function validateMessages(body: JsonObject): void {
  requireModelField(body);
  const maxTokens = body.max_tokens;
  if (maxTokens === undefined || maxTokens === null) throw invalidField('max_tokens', 'max_tokens: Field required.');
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw invalidField('max_tokens', 'max_tokens: must be a positive integer.');
  }
  requireMessages(body);
  optionalBoolean(body, 'stream');
}

/** Unknown model on this surface: Anthropic answers 404 not_found_error (the SDK's NotFoundError). */
function resolve(ctx: RequestContext, body: JsonObject, tier: Parameters<typeof resolveModel>[2], needs?: Parameters<typeof resolveModel>[5]): ModelPlan {
  try {
    return resolveModel(ctx.cfg, body.model, tier, 'chat', 'anthropic', needs, ctx.principal?.guard?.models);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'model_not_found') {
      throw new GatewayError('model_not_found', err.message.replace('GET /v1/models', 'GET /v1/anthropic/v1/models'), { status: 404, param: 'model' });
    }
    throw err;
  }
}

function anthropicChannels(ctx: RequestContext, model: ModelInfo): ChannelInfo[] {
  return orderChannels((ctx.cfg.channelsByModel.get(model.name) ?? []).filter((c) => c.protocol === 'anthropic'));
}

/** A 403 may answer a beta feature the caller asked for: then it is the caller's, passed through. */
function forbiddenOpts(req: GatewayRequest): { forbiddenIsCallers: boolean } {
  return { forbiddenIsCallers: Boolean(req.headers['anthropic-beta']) };
}

/** Headers for the upstream: the channel's key (never the caller's), the caller's protocol headers. */
function upstreamHeaders(req: GatewayRequest, channel: ChannelInfo): Record<string, string> {
  const headers: Record<string, string> = {
    'x-api-key': channel.apiKey,
    'anthropic-version': req.headers['anthropic-version'] || DEFAULT_ANTHROPIC_VERSION,
  };
  const beta = req.headers['anthropic-beta'];
  if (beta) headers['anthropic-beta'] = beta;
  return headers;
}

// ---------------------------------------------------------------------------------------------
// Usage

interface UsageAcc {
  input?: number;
  output?: number;
  cacheWrite?: number;
  cacheRead?: number;
  /** message_delta reported output_tokens: the cumulative, final count. */
  finalOutput: boolean;
}

const count = usageCount;

/** Takes the latest non-null value of each field (message_delta counts are cumulative totals). */
function takeUsage(acc: UsageAcc, u: unknown, fromDelta: boolean): void {
  if (typeof u !== 'object' || u === null) return;
  const o = u as JsonObject;
  acc.input = count(o.input_tokens) ?? acc.input;
  acc.cacheWrite = count(o.cache_creation_input_tokens) ?? acc.cacheWrite;
  acc.cacheRead = count(o.cache_read_input_tokens) ?? acc.cacheRead;
  const out = count(o.output_tokens);
  if (out !== undefined) {
    acc.output = out;
    if (fromDelta) acc.finalOutput = true;
  }
}

/** Our count of the prompt; with a limit, counting stops once past it. */
async function estimatePrompt(body: JsonObject, limit = Infinity): Promise<number> {
  const system = body.system ? await countTokens(textOf(body.system), limit) : 0;
  return system > limit ? system : system + (await countMessageTokens(body.messages, limit - system));
}

/**
 * Usage to bill: the upstream's own counts where it gave them; our tokenizer for what it did not
 * (no usage at all, or a stream that broke before its final message_delta).
 */
async function finalUsage(acc: UsageAcc, body: JsonObject, completion: string): Promise<Usage> {
  const usage = noUsage();
  if (acc.input === undefined) {
    usage.promptTokens = await estimatePrompt(body);
    usage.estimated = true;
  } else usage.promptTokens = acc.input;
  usage.cacheWriteTokens = acc.cacheWrite ?? 0;
  usage.cacheReadTokens = acc.cacheRead ?? 0;
  if (acc.finalOutput && acc.output !== undefined) usage.completionTokens = acc.output;
  else {
    const counted = await countTokens(completion);
    usage.completionTokens = Math.max(acc.output ?? 0, counted);
    if (counted > (acc.output ?? 0) || acc.output === undefined) usage.estimated = true;
  }
  return usage;
}

/** Generated text of a content block list (text, tool input, thinking): for estimation only. */
function completionOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const b of content as JsonObject[]) {
    if (typeof b !== 'object' || b === null) continue;
    if (typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use') text += JSON.stringify(b.input ?? {});
    else if (typeof b.thinking === 'string') text += b.thinking;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// POST /v1/anthropic/v1/messages

async function messages(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const request = await ctx.open(req);
  const { raw, json: body } = request;
  const principal = ctx.principal!;
  validateMessages(body);
  const stream = body.stream === true;
  ctx.stream = stream;
  const maxOut = body.max_tokens as number;
  const promptBound = promptTokenBound(raw.length);
  const plan = resolve(
    ctx,
    body,
    principal.tier,
    body.model === AUTO_MODEL
      ? { tools: Array.isArray(body.tools) && body.tools.length > 0, json: false, promptTokens: await estimatePrompt(body, maxContextWindow(ctx.cfg)), maxOutputTokens: maxOut }
      : undefined,
  );
  ctx.routeReason = plan.reason;
  ctx.model = plan.models[0];
  let reserve = 0n;
  for (const m of plan.models) {
    const c = maxCostOf(m, promptBound, Math.min(maxOut, m.maxOutputTokens));
    if (c > reserve) reserve = c;
  }
  await ctx.admit(plan.models[0], 'anthropic', reserve);

  for (const model of plan.models) {
    // Verbatim unless the router serves another model: then only `model` changes.
    const payload = upstreamBody(request, { model: model.name });
    for (const channel of anthropicChannels(ctx, model)) {
      if (await attempt(ctx, req, sink, model, channel, payload, body, stream)) return;
    }
  }
  ctx.model = plan.models[0];
  ctx.channel = null;
  throw new GatewayError('all_channels_failed', `All upstream channels failed for ${plan.models.map((m) => m.name).join(', ')}.`);
}


/**
 * Calls the upstream with its own abort signal: tied to the client's until the upstream answers,
 * then cut loose, so a client that leaves mid-reply does not stop us from reading the usage.
 */
async function call(channel: ChannelInfo, path: string, payload: string | Buffer, req: GatewayRequest, signal: ClientSignal = req.signal): Promise<UpstreamResponse> {
  return callUpstream(channel, path, payload, upstreamHeaders(req, channel), signal, true);
}

/** Watches the client while the reply is read; if it leaves, reading stops after a drain (startAbortDrain). */
function watchClient(ctx: RequestContext, req: GatewayRequest, res: UpstreamResponse) {
  let open = true;
  let stopDrain: (() => void) | undefined;
  const onAbort = () => {
    open = false;
    ctx.outcome = 'client_closed';
    ctx.status = 499;
    stopDrain = startAbortDrain(() => res.body.destroy());
  };
  if (req.signal.aborted) onAbort();
  else req.signal.addEventListener('abort', onAbort, { once: true });
  return {
    get open() {
      return open;
    },
    dispose() {
      stopDrain?.();
      req.signal.removeEventListener('abort', onAbort);
    },
  };
}

/** One upstream try. Returns true when the request was answered (success or a non-retryable error). */
async function attempt(
  ctx: RequestContext,
  req: GatewayRequest,
  sink: ResponseSink,
  model: ModelInfo,
  channel: ChannelInfo,
  payload: string | Buffer,
  body: JsonObject,
  stream: boolean,
): Promise<boolean> {
  const tried = await ctx.tryChannel(req, channel, model, (signal) => call(channel, MESSAGES_PATH, payload, req, signal), forbiddenOpts(req));
  if (!tried) return false;
  const { res, tracker } = tried;
  const record = tracker.record;
  ctx.model = model;
  ctx.channel = channel.name;
  if (res.status >= 400) {
    // The caller's mistake as the upstream sees it: passed through, not retried, not billed.
    await passThrough(ctx, sink, res, record);
    tracker.finish(true, false);
    return true;
  }
  let ok: boolean;
  try {
    ok = stream ? await relayStream(ctx, req, sink, res, body, record) : await relayJson(ctx, req, sink, res, body, record);
  } catch (err) {
    // Broke off after the first byte: no fallback any more, but the channel is unhealthy.
    tracker.fail(record.error ?? (err as Error).message);
    throw err;
  }
  if (!ok && !sink.started) {
    ctx.channel = null;
    return tracker.fail(record.error ?? 'upstream reply unusable');
  }
  tracker.finish(true, ok);
  return true;
}

/** An upstream 4xx (not 429): its status and body go to the client unchanged. */
async function passThrough(ctx: RequestContext, sink: ResponseSink, res: UpstreamResponse, record: Attempt): Promise<void> {
  const text = await readUpstreamBody(res.body, MAX_ERROR_BYTES).catch(() => '');
  record.error = `upstream answered ${res.status}`;
  ctx.status = res.status;
  ctx.outcome = 'error';
  ctx.errorCode = 'upstream_rejected';
  sink.start(res.status, ctx.headers({ 'content-type': 'application/json', 'x-should-retry': 'false' }));
  sink.end(text || JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `upstream answered ${res.status}` } }));
}

async function relayJson(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink, res: UpstreamResponse, body: JsonObject, record: Attempt): Promise<boolean> {
  const client = watchClient(ctx, req, res);
  let text: string;
  let parsed: JsonObject;
  try {
    text = await readUpstreamBody(res.body, MAX_REPLY_BYTES);
    parsed = JSON.parse(text) as JsonObject;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray(parsed.content)) {
      throw new UpstreamFailure('protocol', 'upstream reply is not a message');
    }
  } catch (err) {
    client.dispose();
    if (!client.open) {
      // Gone, and the reply never fully arrived: bill the prompt, as far as we know it.
      ctx.settleCost(await finalUsage({ finalOutput: false }, body, ''));
      return true;
    }
    record.error = err instanceof SyntaxError ? 'upstream sent malformed JSON' : (err as Error).message;
    return false;
  }
  client.dispose();
  const acc: UsageAcc = { finalOutput: true };
  takeUsage(acc, parsed.usage, true);
  if (acc.output === undefined) acc.finalOutput = false;
  ctx.settleCost(await finalUsage(acc, body, completionOf(parsed.content)));
  ctx.markFirstToken();
  if (!client.open) return true;
  // The upstream's reply as it came; the cost travels in the X-Service-* headers.
  sink.start(200, ctx.headers({ 'content-type': 'application/json' }));
  sink.end(text);
  return true;
}

/** Incremental SSE parser: complete events with their raw text, as the chunks arrive. */
class SseEventReader {
  private readonly splitter = new SseLineSplitter();
  private lines: string[] = [];

  push(chunk: Uint8Array): { raw: string; event: string; data: string }[] {
    const events: { raw: string; event: string; data: string }[] = [];
    for (const line of this.splitter.push(chunk)) {
      if (line !== '') {
        this.lines.push(line);
        continue;
      }
      if (this.lines.length === 0) continue;
      let event = 'message';
      const data: string[] = [];
      for (const l of this.lines) {
        const colon = l.indexOf(':');
        const field = colon === -1 ? l : l.slice(0, colon);
        let value = colon === -1 ? '' : l.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      events.push({ raw: `${this.lines.join('\n')}\n\n`, event, data: data.join('\n') });
      this.lines = [];
    }
    return events;
  }
}

/**
 * Relays the upstream's events as they arrive (each complete event in the chunk that completed it),
 * reading message_start / message_delta usage on the way.
 * Returns false only when the upstream failed before anything reached the client (fallback is allowed).
 */
async function relayStream(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink, res: UpstreamResponse, body: JsonObject, record: Attempt): Promise<boolean> {
  const reader = new SseEventReader();
  const acc: UsageAcc = { finalOutput: false };
  let completion = '';
  let finished = false;
  const client = watchClient(ctx, req, res);

  const startClient = () => {
    if (sink.started) return;
    ctx.markFirstToken();
    sink.start(
      200,
      ctx.headers({
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        'x-service-cost-usd': 'pending',
        'x-service-cost-cny': 'pending',
        trailer: 'x-service-cost-usd, x-service-cost-cny',
      }),
    );
  };

  // Shutdown's cut-off (route-handler path) may end this stream: its upstream read stops here.
  const untrack = trackStream(() => res.body.destroy());
  try {
    for await (const chunk of res.body) {
      let out = '';
      for (const ev of reader.push(chunk as Buffer)) {
        if (ev.data) {
          let data: JsonObject;
          try {
            data = JSON.parse(ev.data) as JsonObject;
          } catch {
            throw new UpstreamFailure('protocol', 'upstream sent malformed JSON in the stream');
          }
          const type = typeof data.type === 'string' ? data.type : ev.event;
          if (type === 'error' || ev.event === 'error') {
            throw new UpstreamFailure('status', `upstream stream error: ${JSON.stringify(data.error ?? data).slice(0, 200)}`);
          }
          if (type === 'message_start') takeUsage(acc, (data.message as JsonObject | undefined)?.usage, false);
          else if (type === 'message_delta') takeUsage(acc, data.usage, true);
          else if (type === 'message_stop') finished = true;
          else if (type === 'content_block_delta') {
            const d = data.delta as JsonObject | undefined;
            if (typeof d?.text === 'string') completion += d.text;
            else if (typeof d?.partial_json === 'string') completion += d.partial_json;
            else if (typeof d?.thinking === 'string') completion += d.thinking;
          }
        }
        out += ev.raw;
      }
      if (out && client.open) {
        startClient();
        await sink.write(out);
      }
    }
  } catch (err) {
    client.dispose();
    if (!client.open) {
      ctx.settleCost(await finalUsage(acc, body, completion));
      return true;
    }
    const failure = classify(err);
    record.error = failure.message;
    if (!sink.started) return false;
    ctx.settleCost(await finalUsage(acc, body, completion));
    ctx.outcome = 'upstream_error';
    throw new GatewayError('upstream_error', `The upstream stream broke off: ${failure.message}`);
  } finally {
    untrack();
  }
  client.dispose();
  if (!client.open) {
    ctx.settleCost(await finalUsage(acc, body, completion));
    return true;
  }
  if (!sink.started) {
    record.error = 'upstream stream ended without data';
    return false;
  }
  ctx.settleCost(await finalUsage(acc, body, completion));
  if (!finished) {
    record.error = 'upstream stream ended before message_stop';
    ctx.outcome = 'upstream_error';
    throw new GatewayError('upstream_error', 'The upstream stream ended before the reply was complete.');
  }
  ctx.endStream(sink);
  return true;
}

// ---------------------------------------------------------------------------------------------
// POST /v1/anthropic/v1/messages/count_tokens: authenticated, forwarded verbatim, logged and not
// billed; admitted under its own request rate and concurrency (the tier's figures), since every
// call goes upstream on the operator's key.

async function countTokensRoute(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const request = await ctx.open(req);
  const body = request.json;
  const principal = ctx.principal!;
  requireModelField(body);
  requireMessages(body);
  const model = resolve(ctx, body, principal.tier).models[0];
  ctx.model = model;
  await ctx.admit(null, 'count_tokens', 0n);
  const payload = upstreamBody(request, { model: model.name });

  for (const channel of anthropicChannels(ctx, model)) {
    const tried = await ctx.tryChannel(req, channel, model, (signal) => call(channel, COUNT_TOKENS_PATH, payload, req, signal), forbiddenOpts(req));
    if (!tried) continue;
    const { res, tracker } = tried;
    try {
      ctx.channel = channel.name;
      if (res.status >= 400) {
        await passThrough(ctx, sink, res, tracker.record);
      } else {
        const text = await readUpstreamBody(res.body, MAX_ERROR_BYTES);
        sink.start(200, ctx.headers({ 'content-type': 'application/json' }));
        sink.end(text);
      }
      tracker.finish(true, res.status < 400);
      return;
    } catch (err) {
      if (req.signal.aborted) throw ctx.clientGone();
      ctx.channel = null;
      tracker.fail((err as Error).message);
    }
  }
  throw new GatewayError('all_channels_failed', `All upstream channels failed for ${model.name}.`);
}
