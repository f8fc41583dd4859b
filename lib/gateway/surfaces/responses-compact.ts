// POST /v1/responses/compact: Codex CLI (remote compaction, `x-codex-beta-features:
// remote_compaction_v2`) sends the conversation when its context fills and replaces its history
// with the `output` items it gets back. A native Responses channel compacts it itself (passed as it
// came). Elsewhere the same model writes the compaction: one summarising call, translated like any
// Responses request and billed and logged as one; the answer keeps the user's messages and adds
// the summary as a user message, items every channel can read on the next turn.
import { isObject } from '@/lib/gateway/translate/wire/json';
import { GatewayError } from '@/lib/errors';
import { invalidField, optionalObject, type JsonObject } from '@/lib/gateway/body';
import type { SurfaceSpec } from '@/lib/gateway/pipeline';
import { conversationKey } from '@/lib/gateway/surfaces/responses';
import { countMessageTokens, countTokens } from '@/lib/gateway/tokens';
import { chatTranslators } from '@/lib/gateway/translate';
import { serviceMember } from '@/lib/gateway/translate/openai-client';
import { chatClientRequest, chatPlanOf, responsesTranslator, type ChatPlan, type ResponsesTurn } from '@/lib/gateway/translate/responses-chat';
import { nativeBody, nativeError, nativeReply, withService } from '@/lib/gateway/translate/responses-native';
import { responsesUsage } from '@/lib/gateway/translate/usage';
import type { Translator, TranslatedReply, UpstreamProtocol } from '@/lib/gateway/translate/types';
import { UpstreamFailure } from '@/lib/gateway/upstream';

/** What the summarising call asks of the model (a choice of ours: docs/protocols.md). */
export const COMPACT_PROMPT =
  'Your context is about to be replaced by a summary. Write that summary now, for yourself to continue from it alone: ' +
  "the user's goal and constraints, what has been done (files read and changed, commands run and what they showed), " +
  'decisions taken and why, what is still open or failing, and the next steps. Be specific (names, paths, values); no preamble.';

/** The user message the summary comes back as. */
export const SUMMARY_PREFIX = 'Summary of the conversation so far (the earlier messages were compacted):\n\n';

/** User messages kept verbatim, newest first, up to about this many characters (~20k tokens). */
const KEPT_USER_CHARS = 80_000;

function userText(item: JsonObject): string {
  if (typeof item.content === 'string') return item.content;
  if (!Array.isArray(item.content)) return '';
  return item.content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** The user messages of the compacted input that are kept (the newest, in order), as Responses input items. */
function keptUserMessages(input: unknown[]): JsonObject[] {
  const kept: JsonObject[] = [];
  let chars = 0;
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (!isObject(item) || (item.type ?? 'message') !== 'message' || item.role !== 'user') continue;
    const text = userText(item);
    if (chars + text.length > KEPT_USER_CHARS && kept.length > 0) break;
    chars += text.length;
    kept.unshift({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  }
  return kept;
}

/** The compaction's answer: `output` is what Codex keeps (the rest mirrors OpenAI's object). */
function compactionBody(response: JsonObject, output: JsonObject[], settledService: string): string {
  const json = JSON.stringify({
    id: response.id,
    object: 'response.compaction',
    created_at: response.created_at,
    output,
    usage: response.usage,
  });
  return `${json.slice(0, -1)},"service":${settledService}}`;
}

/** The summarising call over a chat translator: its Response reply rewritten as the compaction. */
function compactingTranslator(inner: Translator, rt: ResponsesTurn, protocol: UpstreamProtocol, input: unknown[]): Translator {
  const responses = responsesTranslator(inner, rt, protocol);
  return {
    ...responses,
    response(text, call): TranslatedReply {
      const reply = responses.response(text, call);
      return {
        usage: reply.usage,
        get completion() {
          return reply.completion;
        },
        render(settled) {
          const rendered: unknown = JSON.parse(reply.render(settled));
          const response = isObject(rendered) ? rendered : {}; // the chat translators render an object
          let summary = '';
          for (const item of Array.isArray(response.output) ? response.output : []) {
            if (!isObject(item) || item.type !== 'message' || !Array.isArray(item.content)) continue;
            for (const part of item.content) if (isObject(part) && typeof part.text === 'string') summary += part.text;
          }
          if (summary.trim() === '') throw new UpstreamFailure('protocol', 'the compaction came back empty');
          const output = [
            ...keptUserMessages(input),
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: SUMMARY_PREFIX + summary.trim() }] },
          ];
          return compactionBody(response, output, serviceMember(settled));
        },
      };
    },
  };
}

/** A native channel's own compaction, passed through; usage read from its `usage`. */
const nativeCompaction: Translator = {
  request: (req, call) => ({ body: nativeBody(req.body, call.model.name), operation: 'responses_compact' }),
  response(text): TranslatedReply {
    const parsed = nativeReply(text, 'a compaction');
    return { usage: responsesUsage(parsed.usage, parsed.service_tier), completion: '', render: (settled) => withService(parsed, settled) };
  },
  stream() {
    throw new GatewayError('invalid_request', 'The compaction endpoint does not stream.', { param: 'stream' });
  },
  error: nativeError,
};

export const responsesCompactSurface: SurfaceSpec = {
  endpoint: 'chat',
  operation: 'chat',
  kind: 'chat',
  modelsPath: '/v1/models',
  maxReplyBytes: 32 * 1024 * 1024,
  validate(req, cfg, principal) {
    const body = req.body.json;
    if (!Array.isArray(body.input) || body.input.length === 0) throw invalidField('input', '"input" must be a non-empty array of input items.');
    optionalObject(body, 'reasoning');
    // Everything the compaction reads is in the request: on a native channel the body goes upstream
    // as it came, and the upstream's store is shared by every tenant, so nothing may point into it.
    for (const field of ['previous_response_id', 'conversation', 'prompt', 'background'] as const) {
      const v = body[field];
      if (v !== undefined && v !== null && v !== false)
        throw invalidField(field, `"${field}" is not supported by the compaction endpoint: send the conversation in "input".`);
    }
    const reference = body.input.findIndex((item) => isObject(item) && item.type === 'item_reference');
    if (reference >= 0) throw invalidField(`input[${reference}]`, 'Item references are not supported by the compaction endpoint: send the items themselves.');
    const input = body.input;
    // The summarising call: the conversation, then the request to summarise it; tools stay declared
    // (the history calls them) but none may be called.
    const summarise: JsonObject = {
      model: body.model,
      input: [...input, { type: 'message', role: 'user', content: [{ type: 'input_text', text: COMPACT_PROMPT }] }],
      store: false,
    };
    for (const key of ['instructions', 'tools', 'reasoning', 'prompt_cache_key'] as const) if (body[key] !== undefined) summarise[key] = body[key];
    if (Array.isArray(body.tools) && body.tools.length > 0) summarise.tool_choice = 'none';
    let plan: ChatPlan | undefined;
    let untranslatable: GatewayError | undefined;
    try {
      plan = chatPlanOf(summarise, [], principal.userId);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      untranslatable = err;
    }
    const turn: ResponsesTurn = {
      body: summarise,
      chat: plan ? chatClientRequest(plan.chat, req.headers) : req,
      conversation: plan?.conversation ?? [],
      tools: plan?.tools,
      dropped: plan?.dropped,
      account: principal.userId,
      onFinish: () => {},
    };
    const translated = new Map<UpstreamProtocol, Translator | undefined>();
    const messages = plan?.chat.messages;
    return {
      stream: false,
      promptBytes: plan ? turn.chat.body.raw.length : undefined,
      choices: 1,
      billed: true,
      affinity: conversationKey(principal.userId, body),
      estimatePrompt: () => (messages ? countMessageTokens(messages) : countTokens(req.body.text)),
      translator: (protocol, model, channel) => {
        if (channel.responses) return nativeCompaction;
        if (untranslatable) {
          if ((cfg.channelsByModel.get(model.name) ?? []).some((c) => c.responses)) return undefined;
          const refusal = untranslatable;
          return {
            ...nativeCompaction,
            request: () => {
              throw refusal;
            },
          };
        }
        if (!translated.has(protocol)) {
          const inner = chatTranslators.openai[protocol];
          translated.set(protocol, inner && compactingTranslator(inner, turn, protocol, input));
        }
        return translated.get(protocol);
      },
    };
  },
};
