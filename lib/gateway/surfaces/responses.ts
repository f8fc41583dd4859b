// POST /v1/responses (the OpenAI Responses API) and GET/DELETE /v1/responses/{id}. A Responses
// request is served over every channel protocol by the Responses<->Chat mapping composed with the
// chat translators (translate/responses-chat.ts), or passed as it came to a native Responses channel
// (translate/responses-native.ts); stored responses live in responses-store.ts.
import { authenticate } from '@/lib/auth/principal';
import { GatewayError, openaiErrorBody } from '@/lib/errors';
import { checkDenied, countRefused } from '@/lib/gateway/admission';
import { optionalBoolean, optionalInt, optionalNumber, optionalObject, invalidField, type JsonObject } from '@/lib/gateway/body';
import type { RequestContext } from '@/lib/gateway/context';
import type { SurfaceSpec } from '@/lib/gateway/pipeline';
import { responsesOutputCap } from '@/lib/gateway/admission/clamp';
import { deleteResponse, loadResponse, saveResponse } from '@/lib/gateway/responses-store';
import { countMessageTokens, countTokens } from '@/lib/gateway/tokens';
import { chatTranslators } from '@/lib/gateway/translate';
import { isObject } from '@/lib/gateway/translate/openai-client';
import {
  chatClientRequest,
  chatPlanOf,
  responseNotFound,
  responsesStreamError,
  responsesTranslator,
  type ChatPlan,
  type FinishedResponse,
  type ResponsesTurn,
} from '@/lib/gateway/translate/responses-chat';
import { nativeResponsesTranslator } from '@/lib/gateway/translate/responses-native';
import type { Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { log, errorFields } from '@/lib/log';

const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high']);
/** Request fields of OpenAI's own Responses service that no translated channel can honour. */
const REFUSED_FIELDS: Record<string, string> = {
  background: 'background responses are not available',
  conversation: 'the Conversations API is not available; continue with `previous_response_id`',
  prompt: 'stored prompt templates are not available',
};

function validateMetadata(body: JsonObject): void {
  const metadata = optionalObject(body, 'metadata');
  if (!metadata) return;
  const entries = Object.entries(metadata);
  if (entries.length > 16) throw invalidField('metadata', '"metadata" may have at most 16 keys.');
  for (const [k, v] of entries) {
    if (k.length > 64 || typeof v !== 'string' || v.length > 512)
      throw invalidField(`metadata.${k}`, '"metadata" keys must be at most 64 characters and values strings of at most 512.');
  }
}

function validateFields(body: JsonObject): void {
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    const v = body[field];
    if (v !== undefined && v !== null && v !== false) throw invalidField(field, `"${field}" is not supported by this gateway: ${why}.`);
  }
  if (body.input === undefined || body.input === null) throw invalidField('input', '"input" is required: a string or an array of input items.');
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalBoolean(body, 'parallel_tool_calls');
  optionalBoolean(body, 'store');
  validateMetadata(body);
  const reasoning = optionalObject(body, 'reasoning');
  if (reasoning?.effort !== undefined && reasoning.effort !== null && (typeof reasoning.effort !== 'string' || !EFFORTS.has(reasoning.effort))) {
    throw invalidField('reasoning.effort', '"reasoning.effort" must be one of none, minimal, low, medium, high.');
  }
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') throw invalidField('user', '"user" must be a string.');
  if (body.previous_response_id !== undefined && body.previous_response_id !== null && typeof body.previous_response_id !== 'string') {
    throw invalidField('previous_response_id', '"previous_response_id" must be a string.');
  }
}

/** The response an item id belongs to: items are named after their response (msg_X, rs_X, fc_X_n of resp_X). */
function responseOfItem(itemId: string): string | undefined {
  const base = /^(?:msg|rs|fc)_([A-Za-z0-9]+)(?:_\d+)?$/.exec(itemId)?.[1];
  return base && `resp_${base}`;
}

/**
 * Input items given by reference (`{type: "item_reference", id}`: the Vercel AI SDK sends earlier
 * assistant messages so when responses are stored) replaced by the stored items. Only a request
 * that has such items reads the store.
 */
async function resolveItemReferences(userId: string, input: unknown): Promise<unknown> {
  if (!Array.isArray(input) || !input.some((item) => isObject(item) && item.type === 'item_reference')) return input;
  const outputs = new Map<string, JsonObject[]>();
  const resolved: unknown[] = [];
  for (const [i, item] of input.entries()) {
    if (!isObject(item) || item.type !== 'item_reference') {
      resolved.push(item);
      continue;
    }
    const id = typeof item.id === 'string' ? item.id : '';
    const responseId = responseOfItem(id);
    let output = responseId ? outputs.get(responseId) : undefined;
    if (responseId && !output) {
      const row = await loadResponse(userId, responseId);
      output = row ? outputOf(row.response) : [];
      outputs.set(responseId, output);
    }
    const found = output?.find((o) => o.id === id);
    if (!found) throw new GatewayError('not_found', `Item with id '${id}' not found.`, { param: `input[${i}].id` });
    resolved.push(found);
  }
  return resolved;
}

function outputOf(responseText: string): JsonObject[] {
  try {
    const output = (JSON.parse(responseText) as JsonObject).output;
    return Array.isArray(output) ? output.filter(isObject) : [];
  } catch {
    return [];
  }
}

export const responsesSurface: SurfaceSpec = {
  outputCap: responsesOutputCap,
  endpoint: 'chat',
  operation: 'chat',
  kind: 'chat',
  modelsPath: '/v1/models',
  maxReplyBytes: 32 * 1024 * 1024,
  async validate(req, cfg, principal) {
    const body = req.body.json;
    validateFields(body);
    const maxOutputTokens = optionalInt(body, 'max_output_tokens', 1);
    const stream = optionalBoolean(body, 'stream') === true;
    const store = body.store !== false;
    // Only a request that continues a conversation reads the store.
    let history: JsonObject[] = [];
    let usesStore = false;
    if (typeof body.previous_response_id === 'string') {
      const previous = await loadResponse(principal.userId, body.previous_response_id);
      if (!previous) throw responseNotFound(body.previous_response_id, 'previous_response_id');
      history = previous.conversation;
      usesStore = true;
    }
    // What the chat translation cannot carry (a built-in tool, an item only OpenAI's service knows,
    // a reference to an item the upstream stored) only a native Responses channel can serve.
    let untranslatable: GatewayError | undefined;
    let plan: ChatPlan | undefined;
    try {
      const input = await resolveItemReferences(principal.userId, body.input);
      if (input !== body.input) usesStore = true;
      plan = chatPlanOf(input === body.input ? body : { ...body, input }, history);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      untranslatable = err;
    }
    let finished: FinishedResponse | undefined;
    const turn: ResponsesTurn = {
      body,
      chat: plan ? chatClientRequest(plan.chat, req.headers) : req,
      conversation: plan?.conversation ?? [],
      onFinish: (f) => {
        finished = f;
      },
    };
    const native = nativeResponsesTranslator(turn);
    // One translator object per protocol: the pipeline builds one upstream call per translator.
    const translated = new Map<UpstreamProtocol, Translator | undefined>();
    const translatedFor = (protocol: UpstreamProtocol): Translator | undefined => {
      if (!translated.has(protocol)) {
        const inner = chatTranslators.openai[protocol];
        let t = inner && responsesTranslator(inner, turn);
        if (t && untranslatable) {
          const refusal = untranslatable;
          t = {
            ...t,
            request: () => {
              throw refusal;
            },
          };
        }
        translated.set(protocol, t);
      }
      return translated.get(protocol);
    };
    const messages = plan?.chat.messages;
    return {
      stream,
      maxOutputTokens,
      // Reserved for the whole conversation, the stored turns included.
      promptBytes: plan ? turn.chat.body.raw.length : undefined,
      choices: 1,
      billed: true,
      autoNeeds: async (limit) => ({
        tools: Array.isArray(body.tools) && body.tools.length > 0,
        json: (plan?.chat.response_format as JsonObject | undefined)?.type === 'json_object',
        promptTokens: messages ? await countMessageTokens(messages, limit) : await countTokens(req.body.text, limit),
        maxOutputTokens,
      }),
      estimatePrompt: () => (messages ? countMessageTokens(messages) : countTokens(req.body.text)),
      // A native channel gets the request as it came, unless it continues a conversation of our
      // store that the chat translation carries (the upstream does not know our response ids).
      // Untranslatable requests skip the model's other channels; with no native channel they are
      // the translation's 400.
      translator: (protocol, model, channel) => {
        if (channel.responses && (untranslatable || !usesStore)) return native;
        if (untranslatable && (cfg.channelsByModel.get(model.name) ?? []).some((c) => c.responses)) return undefined;
        return translatedFor(protocol);
      },
      streamError: (err) => responsesStreamError(turn, openaiErrorBody(err)),
      // Written before the last bytes: a GET (on any instance) right after the reply finds it.
      // A failed write costs the client its stored copy, not the answer it paid for.
      beforeEnd: async (model) => {
        if (!store || !finished) return;
        try {
          await saveResponse(principal.userId, model.name, finished, cfg.responsesRetentionDays);
        } catch (err) {
          log('error', 'storing a response failed', { responseId: finished.id, ...errorFields(err) });
        }
      },
    };
  },
};

/**
 * The caller of GET/DELETE: these requests admit nothing, so the deny markers are read here; each
 * reads the database, so each counts against the account's request rate (the chat endpoint's).
 */
async function caller(ctx: RequestContext, req: GatewayRequest) {
  const principal = await authenticate(req.headers);
  await checkDenied(principal);
  const limited = await countRefused(principal, ctx.cfg, 'chat', ctx.requestId);
  if (limited) throw limited;
  return principal;
}

/** The response id of /v1/responses/{id}[/…]: the segment after /v1/responses. */
function idOf(req: GatewayRequest): string {
  const segment = req.path.split('/')[3] ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** GET /v1/responses/{id}: a stored response of the caller's account. */
export async function getResponse(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(ctx, req);
  const id = idOf(req);
  const row = await loadResponse(principal.userId, id);
  if (!row) throw responseNotFound(id);
  sink.start(200, ctx.headers({ 'content-type': 'application/json' }));
  sink.end(row.response);
}

/** DELETE /v1/responses/{id}. */
export async function removeResponse(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(ctx, req);
  const id = idOf(req);
  if (!(await deleteResponse(principal.userId, id))) throw responseNotFound(id);
  sink.start(200, ctx.headers({ 'content-type': 'application/json' }));
  sink.end(JSON.stringify({ id, object: 'response', deleted: true }));
}

/** A stored chat message as the Responses input items it was given as (ids minted from its position). */
function inputItemsOf(msg: JsonObject, at: string): JsonObject[] {
  const items: JsonObject[] = [];
  if (msg.role === 'tool') {
    items.push({
      id: `fco_${at}`,
      type: 'function_call_output',
      call_id: msg.tool_call_id,
      output: typeof msg.content === 'string' ? msg.content : '',
      status: 'completed',
    });
    return items;
  }
  const role = typeof msg.role === 'string' ? msg.role : 'user';
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  const parts: JsonObject[] = [];
  if (typeof msg.content === 'string') {
    if (msg.content !== '' || !Array.isArray(msg.tool_calls))
      parts.push(role === 'assistant' ? { type: textType, text: msg.content, annotations: [] } : { type: textType, text: msg.content });
  } else if (Array.isArray(msg.content)) {
    for (const p of msg.content) {
      if (!isObject(p)) continue;
      if (p.type === 'text') parts.push({ type: textType, text: p.text });
      else if (p.type === 'image_url' && isObject(p.image_url))
        parts.push({ type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' });
      else if (p.type === 'file' && isObject(p.file)) parts.push({ type: 'input_file', file_data: p.file.file_data, filename: p.file.filename });
    }
  }
  if (parts.length > 0) items.push({ id: `msg_${at}`, type: 'message', role, status: 'completed', content: parts });
  if (Array.isArray(msg.tool_calls)) {
    msg.tool_calls.forEach((c, j) => {
      if (!isObject(c) || !isObject(c.function)) return;
      items.push({ id: `fc_${at}_${j}`, type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed' });
    });
  }
  return items;
}

function queryParams(req: GatewayRequest): URLSearchParams {
  return new URLSearchParams(req.query ?? '');
}

/**
 * GET /v1/responses/{id}/input_items: the input the response was made from (the stored
 * conversation before its reply, earlier turns of a `previous_response_id` chain included), in
 * OpenAI's list shape; `limit` (1-100, default 20), `order` (`desc` by default, as OpenAI), `after`.
 */
export async function listInputItems(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(ctx, req);
  const id = idOf(req);
  const q = queryParams(req);
  const limitText = q.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidField('limit', '"limit" must be an integer from 1 to 100.');
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidField('order', '"order" must be "asc" or "desc".');
  const row = await loadResponse(principal.userId, id);
  if (!row) throw responseNotFound(id);
  // The stored conversation ends with this response's reply: everything before it was its input.
  const conversation = row.conversation.at(-1)?.role === 'assistant' ? row.conversation.slice(0, -1) : row.conversation;
  const base = id.replace(/^resp_/, '');
  let items = conversation.flatMap((m, i) => inputItemsOf(m, `in${i}_${base}`));
  if (order === 'desc') items = items.reverse();
  const after = q.get('after');
  if (after !== null) {
    const at = items.findIndex((item) => item.id === after);
    if (at < 0) throw invalidField('after', `"after": no input item with id '${after}' in this response.`);
    items = items.slice(at + 1);
  }
  const page = items.slice(0, limit);
  sink.start(200, ctx.headers({ 'content-type': 'application/json' }));
  sink.end(JSON.stringify({ object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: items.length > limit }));
}
