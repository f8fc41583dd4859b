import type { ChannelInfo, ModelInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { formatPico } from '@/lib/billing/money';
import { maxCostOf, noUsage, usageCount, type Usage } from '@/lib/billing/cost';
import { expireLeases } from '@/lib/gateway/admission';
import { optionalBoolean, optionalInt, optionalNumber, optionalObject, invalidField, upstreamBody, type JsonObject } from '@/lib/gateway/body';
import { maxContextWindow, resolveModel, orderChannels } from '@/lib/gateway/router';
import { callUpstream, readUpstreamBody, UpstreamFailure, classify, type UpstreamResponse } from '@/lib/gateway/upstream';
import { countMessageTokens, countTokens, promptTokenBound, textOf } from '@/lib/gateway/tokens';
import { SseLineSplitter } from '@/lib/gateway/sse';
import type { RequestContext } from '@/lib/gateway/context';
import { startAbortDrain, trackStream } from '@/lib/shutdown';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';

const MAX_REPLY_BYTES = 32 * 1024 * 1024;
/** Most completions one request may ask for (`n`), as OpenAI allows. */
const MAX_CHOICES = 128;
const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'developer', 'function']);

function validate(body: JsonObject): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalidField('messages', '"messages" must be a non-empty array.');
  messages.forEach((m, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalidField(`messages[${i}]`, `messages[${i}] must be an object.`);
    const role = (m as JsonObject).role;
    if (typeof role !== 'string' || !ROLES.has(role)) throw invalidField(`messages[${i}].role`, `messages[${i}].role must be one of ${[...ROLES].join(', ')}.`);
    const content = (m as JsonObject).content;
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      throw invalidField(`messages[${i}].content`, `messages[${i}].content must be a string or an array of content parts.`);
    }
    // Content parts are objects (or bare strings); null or an array would crash the token counter.
    if (Array.isArray(content)) {
      content.forEach((p, j) => {
        if (typeof p !== 'string' && (typeof p !== 'object' || p === null || Array.isArray(p))) {
          throw invalidField(`messages[${i}].content[${j}]`, `messages[${i}].content[${j}] must be a content part object.`);
        }
      });
    }
  });
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalInt(body, 'max_tokens', 1);
  optionalInt(body, 'max_completion_tokens', 1);
  const n = optionalInt(body, 'n', 1);
  if (n !== undefined && n > MAX_CHOICES) throw invalidField('n', `"n" must be at most ${MAX_CHOICES}.`);
  optionalBoolean(body, 'stream');
  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== 'string' && !(Array.isArray(stop) && stop.every((s) => typeof s === 'string'))) {
    throw invalidField('stop', '"stop" must be a string or an array of strings.');
  }
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) throw invalidField('tools', '"tools" must be an array.');
  optionalObject(body, 'response_format');
  optionalObject(body, 'stream_options');
}

/** The service options ride in the body (`extra_body.service` in the SDKs); they never go upstream. */
function serviceOptions(body: JsonObject): { region?: string; task?: string } {
  const service = optionalObject(body, 'service') ?? {};
  for (const k of ['region', 'task'] as const) {
    if (service[k] !== undefined && typeof service[k] !== 'string') throw invalidField(`service.${k}`, `"service.${k}" must be a string.`);
  }
  return service as { region?: string; task?: string };
}

/** The upstream's usage, when it reported a usable prompt count (see usageCount). */
function readUsage(u: JsonObject | undefined): Usage | null {
  if (!u || typeof u !== 'object') return null;
  const prompt = usageCount(u.prompt_tokens);
  if (prompt === undefined) return null;
  return { ...noUsage(), promptTokens: prompt, completionTokens: usageCount(u.completion_tokens) ?? 0 };
}

async function estimateUsage(messages: unknown, completion: string): Promise<Usage> {
  return { ...noUsage(), promptTokens: await countMessageTokens(messages), completionTokens: await countTokens(completion), estimated: true };
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

/** Writes a JSON number as exact decimal text (JSON.stringify would switch to 1e-7 notation). */
const exactNumber = (pico: bigint) => formatPico(pico);

export async function chatCompletions(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const cfg = ctx.cfg;
  const request = await ctx.open(req);
  const { raw, json: body } = request;
  const principal = ctx.principal!;
  validate(body);
  const service = serviceOptions(body);
  const stream = body.stream === true;
  ctx.stream = stream;
  // Upstreams differ in which of the two they honour when both are sent: reserve for the larger.
  const maxOut = maxOf((body.max_tokens ?? undefined) as number | undefined, (body.max_completion_tokens ?? undefined) as number | undefined);
  const promptBound = promptTokenBound(raw.length);
  const plan = resolveModel(cfg, body.model, principal.tier, 'chat', 'openai', {
    tools: Array.isArray(body.tools) && body.tools.length > 0,
    json: (body.response_format as JsonObject | undefined)?.type === 'json_object',
    // Counted only as far as the largest context window: past it no model fits anyway.
    promptTokens: body.model === 'service-auto' ? await countMessageTokens(body.messages, maxContextWindow(cfg)) : promptBound,
    maxOutputTokens: maxOut,
    task: service.task,
  }, principal.guard?.models);
  ctx.routeReason = plan.reason;
  ctx.model = plan.models[0];
  // `n` completions each produce up to the output cap.
  ctx.choices = (body.n as number | undefined) ?? 1;
  let reserve = 0n;
  for (const m of plan.models) {
    const c = maxCostOf(m, promptBound, Math.min(maxOut ?? m.maxOutputTokens, m.maxOutputTokens) * ctx.choices);
    if (c > reserve) reserve = c;
  }
  await ctx.admit(plan.models[0], 'chat', reserve);

  const clientWantsUsage = (body.stream_options as JsonObject | undefined)?.include_usage === true;
  // A stream always asks for the usage chunk (billing needs it); the client sees it only if it asked.
  const streamOptions = stream && !clientWantsUsage ? { ...(body.stream_options as JsonObject | undefined), include_usage: true } : body.stream_options;

  for (const model of plan.models) {
    // The service options never go upstream.
    const payload = upstreamBody(request, { model: model.name, service: undefined, stream_options: streamOptions });
    for (const channel of orderChannels(cfg.channelsByModel.get(model.name) ?? [])) {
      const done = await attempt(ctx, req, sink, model, channel, payload, body, stream, clientWantsUsage);
      if (done) return;
    }
  }
  ctx.model = plan.models[0];
  ctx.channel = null;
  throw new GatewayError('all_channels_failed', `All upstream channels failed for ${plan.models.map((m) => m.name).join(', ')}.`);
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
  clientWantsUsage: boolean,
): Promise<boolean> {
  const tried = await ctx.tryChannel(req, channel, model, (signal) =>
    callUpstream(channel, '/chat/completions', payload, { authorization: `Bearer ${channel.apiKey}` }, signal, stream),
  );
  if (!tried) return false;
  const { res, tracker } = tried;
  const record = tracker.record;
  ctx.model = model;
  ctx.channel = channel.name;
  if (res.status >= 400) {
    // The caller's mistake as the upstream sees it: passed through, not retried, not billed.
    const text = await readUpstreamBody(res.body, 1024 * 1024).catch(() => '');
    tracker.finish(true, false);
    ctx.status = res.status;
    ctx.outcome = 'error';
    ctx.errorCode = 'upstream_rejected';
    sink.start(res.status, ctx.headers({ 'content-type': 'application/json', 'x-should-retry': 'false' }));
    sink.end(text || JSON.stringify({ error: { message: `upstream answered ${res.status}`, type: 'invalid_request_error', param: null, code: 'upstream_rejected' } }));
    return true;
  }
  let ok: boolean;
  try {
    ok = stream ? await relayStream(ctx, req, sink, res, body, clientWantsUsage, record) : await relayJson(ctx, sink, res, body, record);
  } catch (err) {
    // Broke off after the first byte: no fallback any more, but the channel is unhealthy.
    tracker.fail(record.error ?? (err as Error).message);
    throw err;
  }
  if (!ok && !sink.started) {
    if (req.signal.aborted) throw ctx.clientGone();
    ctx.channel = null;
    return tracker.fail(record.error ?? 'upstream reply unusable');
  }
  tracker.finish(true, ok);
  return true;
}

async function relayJson(ctx: RequestContext, sink: ResponseSink, res: UpstreamResponse, body: JsonObject, record: { error?: string }): Promise<boolean> {
  let text: string;
  let parsed: JsonObject;
  try {
    text = await readUpstreamBody(res.body, MAX_REPLY_BYTES);
    parsed = JSON.parse(text) as JsonObject;
    if (!Array.isArray(parsed.choices)) throw new UpstreamFailure('protocol', 'upstream reply has no choices');
  } catch (err) {
    record.error = err instanceof SyntaxError ? 'upstream sent malformed JSON' : (err as Error).message;
    return false;
  }
  const upstreamUsage = readUsage(parsed.usage as JsonObject | undefined);
  const usage = upstreamUsage ?? (await estimateUsage(body.messages, (parsed.choices as JsonObject[]).map((c) => textOf((c.message as JsonObject | undefined)?.content)).join('')));
  ctx.settleCost(usage);
  ctx.markFirstToken();
  const service = `{"channel":${JSON.stringify(ctx.channel)},"latency_ms":${ctx.elapsedMs()},"cost_usd":${exactNumber(ctx.cost)}}`;
  const end = text.lastIndexOf('}');
  if (upstreamUsage && parsed.object === 'chat.completion' && typeof parsed.id === 'string' && parsed.id.startsWith('chatcmpl-') && parsed.service === undefined && end > 0) {
    // The common case: the upstream's reply is already in OpenAI's shape, so it is forwarded as it
    // came, with our `service` member spliced in before the closing brace (no re-serialisation).
    text = `${text.slice(0, end)},"service":${service}}`;
  } else {
    if (typeof parsed.id !== 'string' || !parsed.id.startsWith('chatcmpl-')) parsed.id = `chatcmpl-${typeof parsed.id === 'string' ? parsed.id : ctx.requestId}`;
    parsed.object = 'chat.completion';
    if (!parsed.usage) parsed.usage = { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens };
    parsed.service = '__SERVICE__';
    text = JSON.stringify(parsed).replace('"__SERVICE__"', service);
  }
  // A known length lets node send the reply in one write instead of chunked framing.
  sink.start(200, ctx.headers({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }));
  sink.end(text);
  return true;
}

/**
 * Relays SSE chunk by chunk as they arrive. The usage chunk (which we always ask for) is priced
 * and, if the client asked for it, forwarded with cost_usd/cost_cny; otherwise removed.
 * Returns false only when the upstream failed before anything reached the client (fallback is allowed).
 */
async function relayStream(
  ctx: RequestContext,
  req: GatewayRequest,
  sink: ResponseSink,
  res: UpstreamResponse,
  body: JsonObject,
  clientWantsUsage: boolean,
  record: { error?: string },
): Promise<boolean> {
  const splitter = new SseLineSplitter();
  let usage: Usage | null = null;
  let finished = false;
  let sawDone = false;
  let completion = '';
  let clientOpen = true;
  let streamId = '';
  let model = '';
  let created = 0;
  let stopDrain: (() => void) | undefined;
  const onAbort = () => {
    clientOpen = false;
    ctx.outcome = 'client_closed';
    ctx.status = 499;
    // Keep reading for the usage, but not forever; the client's concurrency slot is free at once.
    stopDrain = startAbortDrain(() => res.body.destroy());
    if (ctx.admission) expireLeases(ctx.admission);
  };
  if (req.signal.aborted) onAbort();
  else req.signal.addEventListener('abort', onAbort, { once: true });

  const startClient = () => {
    if (sink.started) return;
    ctx.markFirstToken();
    sink.start(200, ctx.headers({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-service-cost-usd': 'pending', 'x-service-cost-cny': 'pending', trailer: 'x-service-cost-usd, x-service-cost-cny' }));
  };

  // Shutdown's cut-off (route-handler path) may end this stream: its upstream read stops here.
  const untrack = trackStream(() => res.body.destroy());
  try {
    for await (const chunk of res.body) {
      let out = '';
      for (const line of splitter.push(chunk as Buffer)) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
        if (data === '[DONE]') {
          sawDone = true;
          continue;
        }
        let parsed: JsonObject;
        try {
          parsed = JSON.parse(data) as JsonObject;
        } catch {
          throw new UpstreamFailure('protocol', 'upstream sent malformed JSON in the stream');
        }
        if (parsed.error) throw new UpstreamFailure('status', `upstream stream error: ${JSON.stringify(parsed.error).slice(0, 200)}`);
        streamId ||= String(parsed.id ?? '');
        model ||= String(parsed.model ?? '');
        created ||= Number(parsed.created ?? 0);
        const choices = parsed.choices as JsonObject[] | undefined;
        if (choices) {
          for (const c of choices) {
            const delta = c.delta as JsonObject | undefined;
            if (typeof delta?.content === 'string') completion += delta.content;
            if (c.finish_reason) finished = true;
          }
        }
        const u = readUsage(parsed.usage as JsonObject | undefined);
        if (u) usage = u;
        if (u && (!choices || choices.length === 0)) continue; // the usage chunk: sent at the end, priced
        out += `data: ${data}\n\n`;
      }
      if (out && clientOpen) {
        startClient();
        await sink.write(out);
      }
    }
  } catch (err) {
    stopDrain?.();
    req.signal.removeEventListener('abort', onAbort);
    if (!clientOpen) return finishAborted(ctx, body, usage, completion);
    const failure = classify(err);
    record.error = failure.message;
    if (!sink.started) return false;
    ctx.settleCost(usage ?? (await estimateUsage(body.messages, completion)));
    ctx.outcome = 'upstream_error';
    throw new GatewayError('upstream_error', `The upstream stream broke off: ${failure.message}`);
  } finally {
    untrack();
  }
  stopDrain?.();
  req.signal.removeEventListener('abort', onAbort);
  if (!clientOpen) return finishAborted(ctx, body, usage, completion);
  if (!sink.started && !finished) {
    record.error = 'upstream stream ended without data';
    return false;
  }
  ctx.settleCost(usage ?? (await estimateUsage(body.messages, completion)));
  startClient();
  if (!finished && !sawDone) {
    ctx.outcome = 'upstream_error';
    throw new GatewayError('upstream_error', 'The upstream stream ended before the reply was complete.');
  }
  let tail = '';
  if (clientWantsUsage) {
    const u = ctx.usage;
    const usageChunk = JSON.stringify({
      id: streamId,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [],
      usage: { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens, cost_usd: '__USD__', cost_cny: '__CNY__' },
    })
      .replace('"__USD__"', exactNumber(ctx.cost))
      .replace('"__CNY__"', exactNumber(ctx.costCny()));
    tail += `data: ${usageChunk}\n\n`;
  }
  tail += 'data: [DONE]\n\n';
  ctx.endStream(sink, tail);
  return true;
}

async function finishAborted(ctx: RequestContext, body: JsonObject, usage: Usage | null, completion: string): Promise<boolean> {
  // Billed for what was generated: the upstream's own count if it arrived, else our tokenizer's.
  ctx.settleCost(usage ?? (await estimateUsage(body.messages, completion)));
  return true;
}
