// POST /v1/responses (the OpenAI Responses API) and GET/DELETE /v1/responses/{id}. A Responses
// request is served over every channel protocol by the Responses<->Chat mapping composed with the
// chat translators (translate/responses-chat.ts), or passed as it came to a native Responses channel
// (translate/responses-native.ts); stored responses live in responses-store.ts.
import { isObject } from '@/lib/gateway/translate/wire/json';
import { builtInToolsOf } from '@/lib/gateway/builtin-tools';
import { GatewayError, openaiErrorBody } from '@/lib/errors';
import { optionalBoolean, optionalInt, optionalNumber, optionalObject, invalidField, type JsonObject } from '@/lib/gateway/body';
import { authorizeRead, type RequestContext } from '@/lib/gateway/context';
import { responseHeaders } from '@/lib/gateway/answer';
import type { SurfaceSpec } from '@/lib/gateway/pipeline';
import { responsesOutputCap } from '@/lib/gateway/admission/clamp';
import { deleteResponse, findItem, loadHistory, loadResponse, saveResponse, walkConversation, type StoredHistory } from '@/lib/gateway/responses-store';
import { preAdmission } from '@/lib/gateway/account-gate';
import { countMessageTokens, countTokens } from '@/lib/gateway/tokens';
import { chatTranslators } from '@/lib/gateway/translate';

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

/** Item references one request may make (each is a read of the store). */
const MAX_ITEM_REFERENCES = 256;

/**
 * Input items given by reference (`{type: "item_reference", id}`: the Vercel AI SDK sends earlier
 * assistant messages so when responses are stored) replaced by the stored items of the caller's
 * own responses. An id the caller's store does not hold is a 404 naming it, as OpenAI answers: it
 * never goes to a native upstream, whose store all tenants share. Only a request that has such
 * items reads the store.
 */
function hasItemReferences(input: unknown): input is unknown[] {
  return Array.isArray(input) && input.some((item) => isObject(item) && item.type === 'item_reference');
}

async function resolveItemReferences(userId: string, input: unknown): Promise<unknown> {
  if (!hasItemReferences(input)) return input;
  const references = input.filter((item) => isObject(item) && item.type === 'item_reference').length;
  if (references > MAX_ITEM_REFERENCES) throw invalidField('input', `"input" may hold at most ${MAX_ITEM_REFERENCES} item references.`);
  const resolved: unknown[] = [];
  for (const [i, item] of input.entries()) {
    if (!isObject(item) || item.type !== 'item_reference') {
      resolved.push(item);
      continue;
    }
    const id = typeof item.id === 'string' ? item.id : '';
    const found = id ? await findItem(userId, id, responseOfItem) : null;
    if (!found) throw new GatewayError('not_found', `Item with id '${id}' not found.`, { param: `input[${i}].id` });
    resolved.push(found);
  }
  return resolved;
}

/** The key that keeps a conversation on one channel: its `prompt_cache_key` (Codex: the session id), within the account. */
export function conversationKey(userId: string, body: JsonObject): string | undefined {
  return typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '' ? `${userId}\0${body.prompt_cache_key}` : undefined;
}

export const responsesSurface: SurfaceSpec = {
  outputCap: responsesOutputCap,
  endpoint: 'chat',
  operation: 'chat',
  kind: 'chat',
  modelsPath: '/v1/models',
  maxReplyBytes: 32 * 1024 * 1024,
  async validate(req, cfg, principal, _bodyBytes, signal) {
    const body = req.body.json;
    validateFields(body);
    const maxOutputTokens = optionalInt(body, 'max_output_tokens', 1);
    const stream = optionalBoolean(body, 'stream') === true;
    const store = body.store !== false;
    // Only a request that continues a conversation (or references items) reads the store: after
    // the key's checks, in one of the account's turns (account-gate.ts), bounded by the body cap.
    const previousId = body.previous_response_id;
    const { history, input } =
      typeof previousId === 'string' || hasItemReferences(body.input)
        ? await preAdmission(principal.userId, signal, async () => {
            const found = typeof previousId === 'string' ? await loadHistory(principal.userId, previousId, cfg.limits.max_body_bytes) : null;
            if (typeof previousId === 'string' && !found) throw responseNotFound(previousId, 'previous_response_id');
            return { history: found, input: await resolveItemReferences(principal.userId, body.input) };
          })
        : { history: null as StoredHistory | null, input: body.input as unknown };
    let usesStore = history !== null;
    if (input !== body.input) usesStore = true;
    // What the chat translation cannot carry (a built-in tool, an item only OpenAI's service knows)
    // only a native Responses channel can serve.
    let untranslatable: GatewayError | undefined;
    let plan: ChatPlan | undefined;
    try {
      plan = chatPlanOf(input === body.input ? body : { ...body, input }, history?.messages ?? [], principal.userId);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      untranslatable = err;
    }
    let finished: FinishedResponse | undefined;
    const turn: ResponsesTurn = {
      body,
      chat: plan ? chatClientRequest(plan.chat, req.headers) : req,
      conversation: plan?.conversation ?? [],
      tools: plan?.tools,
      dropped: plan?.dropped,
      account: principal.userId,
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
        let t = inner && responsesTranslator(inner, turn, protocol);
        if (t && (untranslatable || plan?.forcedHosted)) {
          const refusal = (untranslatable ?? plan?.forcedHosted) as GatewayError;
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
    const hosted = (plan?.dropped.length ?? 0) > 0;
    return {
      stream,
      maxOutputTokens,
      // Reserved for the whole conversation, the stored turns included.
      promptBytes: plan ? turn.chat.body.raw.length : undefined,
      grownBy: history ? 'previous_response_id' : undefined,
      choices: 1,
      billed: true,
      // Served only by native channels, which run them and bill each call.
      builtInTools: builtInToolsOf(body, (i) => `tools[${i}].type`, undefined, body.max_tool_calls),
      builtInToolsRunOn: (channel) => channel.responses === true,
      autoNeeds: async (limit, signal) => ({
        tools: Array.isArray(body.tools) && body.tools.length > 0,
        json: isObject(plan?.chat.response_format) && plan.chat.response_format.type === 'json_object',
        promptTokens: messages ? await countMessageTokens(messages, limit, signal) : await countTokens(req.body.text, limit, signal),
        maxOutputTokens,
      }),
      estimatePrompt: () => (messages ? countMessageTokens(messages) : countTokens(req.body.text)),
      // A native channel gets the request as it came, unless it continues a conversation of our
      // store that the chat translation carries (the upstream does not know our response ids).
      // Untranslatable requests skip the model's other channels; with no native channel they are
      // the translation's 400.
      // Hosted tools (web_search) run only on a native channel: a model that has one is served there;
      // elsewhere they are dropped (x-service-dropped), unless tool_choice forces one (the 400).
      translator: (protocol, model, channel) => {
        const needsNative = untranslatable !== undefined || hosted;
        if (channel.responses && (needsNative || !usesStore)) return native;
        if (needsNative && (cfg.channelsByModel.get(model.name) ?? []).some((c) => c.responses)) return undefined;
        return translatedFor(protocol);
      },
      streamError: (err) => responsesStreamError(turn, openaiErrorBody(err)),
      affinity: conversationKey(principal.userId, body),
      // Written before the last bytes: a GET (on any instance) right after the reply finds it.
      // A failed write costs the client its stored copy, not the answer it paid for.
      beforeEnd: async (model) => {
        if (!store || !finished) return;
        try {
          await saveResponse(principal.userId, model.name, finished, history, {
            retentionDays: cfg.responsesRetentionDays,
            maxBytes: cfg.limits.max_body_bytes,
            quota: cfg.responsesQuota,
          });
        } catch (err) {
          log('error', 'storing a response failed', { responseId: finished.id, ...errorFields(err) });
        }
      },
    };
  },
};

/** The response id of /v1/responses/{id}[/…]: the segment after /v1/responses. */
function idOf(req: GatewayRequest): string {
  const segment = req.path.split('/')[3] ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A read of the store in one of the caller's turns (account-gate.ts): no account reads it without bound. */
async function asCaller(ctx: RequestContext, req: GatewayRequest, work: (userId: string) => Promise<void>): Promise<void> {
  const principal = await authorizeRead(ctx, req);
  await preAdmission(principal.userId, req.signal, () => work(principal.userId));
}

/** GET /v1/responses/{id}: a stored response of the caller's account. */
export async function getResponse(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  await asCaller(ctx, req, async (userId) => {
    const id = idOf(req);
    const row = await loadResponse(userId, id);
    if (!row) throw responseNotFound(id);
    sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
    sink.end(row.response);
  });
}

/** DELETE /v1/responses/{id}. Later turns that continued it can no longer be continued (404 naming it). */
export async function removeResponse(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  await asCaller(ctx, req, async (userId) => {
    const id = idOf(req);
    if (!(await deleteResponse(userId, id))) throw responseNotFound(id);
    sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
    sink.end(JSON.stringify({ id, object: 'response', deleted: true }));
  });
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
  const principal = await authorizeRead(ctx, req);
  const id = idOf(req);
  const q = queryParams(req);
  const limitText = q.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidField('limit', '"limit" must be an integer from 1 to 100.');
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidField('order', '"order" must be "asc" or "desc".');
  const after = q.get('after');
  // Turn by turn (one stored row at a time), until the page and one more item are found.
  const page: JsonObject[] = [];
  let past = after === null;
  const known = await preAdmission(principal.userId, req.signal, () =>
    walkConversation(principal.userId, id, order, (messages, turnId) => {
      // This response's own turn ends with its reply: everything before it was its input.
      const input = turnId === id && messages.at(-1)?.role === 'assistant' ? messages.slice(0, -1) : messages;
      const base = turnId.replace(/^resp_/, '');
      const items = input.flatMap((m, i) => inputItemsOf(m, `in${i}_${base}`));
      if (order === 'desc') items.reverse();
      for (const item of items) {
        if (!past) past = item.id === after;
        else if (page.push(item) > limit) return false;
      }
      return true;
    }),
  );
  if (!known) throw responseNotFound(id);
  if (!past) throw invalidField('after', `"after": no input item with id '${after}' in this response.`);
  const data = page.slice(0, limit);
  sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
  sink.end(JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.length > limit }));
}
