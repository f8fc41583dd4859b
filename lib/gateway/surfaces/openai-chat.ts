// POST /v1/chat/completions: what an OpenAI chat client may send, and what the pipeline needs of it.
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { PreparedRequest, SurfaceSpec } from '@/lib/gateway/pipeline';
import type { RequestNeeds } from '@/lib/gateway/router';
import { chatOutputCap } from '@/lib/gateway/admission/clamp';
import { optionalBoolean, optionalInt, optionalNumber, optionalObject, invalidField, type JsonObject } from '@/lib/gateway/body';
import { countMessageTokens, type CountSignal } from '@/lib/gateway/tokens';
import { chatTranslators } from '@/lib/gateway/translate';
import type { Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';

/** Most completions one request may ask for (`n`), as OpenAI allows. */
const MAX_CHOICES = 128;
const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'developer', 'function']);

function validateMessages(body: JsonObject): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalidField('messages', '"messages" must be a non-empty array.');
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isObject(m)) throw invalidField(`messages[${i}]`, `messages[${i}] must be an object.`);
    const role = m.role;
    if (typeof role !== 'string' || !ROLES.has(role)) throw invalidField(`messages[${i}].role`, `messages[${i}].role must be one of ${[...ROLES].join(', ')}.`);
    const content = m.content;
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      throw invalidField(`messages[${i}].content`, `messages[${i}].content must be a string or an array of content parts.`);
    }
    // Content parts are objects (or bare strings); null or an array would crash the token counter.
    if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const p: unknown = content[j];
        if (typeof p !== 'string' && (typeof p !== 'object' || p === null || Array.isArray(p))) {
          throw invalidField(`messages[${i}].content[${j}]`, `messages[${i}].content[${j}] must be a content part object.`);
        }
      }
    }
  }
}

const SERVICE_FIELDS = ['region', 'task'] as const;

/** The service options ride in the body (`extra_body.service` in the SDKs); they never go upstream. */
function serviceTask(body: JsonObject): string | undefined {
  const service = optionalObject(body, 'service');
  if (!service) return undefined;
  for (const k of SERVICE_FIELDS) {
    if (service[k] !== undefined && typeof service[k] !== 'string') throw invalidField(`service.${k}`, `"service.${k}" must be a string.`);
  }
  return service.task as string | undefined;
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

/** A valid chat request, as the pipeline reads it; its hooks are methods, so that a request makes one object. */
class ChatRequest implements PreparedRequest {
  readonly billed = true;

  constructor(
    private readonly body: JsonObject,
    readonly stream: boolean,
    readonly maxOutputTokens: number | undefined,
    readonly choices: number,
    private readonly jsonMode: boolean,
    private readonly task: string | undefined,
  ) {}

  async autoNeeds(limit: number, signal: CountSignal): Promise<RequestNeeds> {
    return {
      tools: Array.isArray(this.body.tools) && this.body.tools.length > 0,
      json: this.jsonMode,
      // Counted only as far as the largest context window: past it no model fits anyway.
      promptTokens: await countMessageTokens(this.body.messages, limit, signal),
      maxOutputTokens: this.maxOutputTokens,
      task: this.task,
    };
  }

  estimatePrompt(): Promise<number> {
    return countMessageTokens(this.body.messages);
  }

  translator(protocol: UpstreamProtocol): Translator | undefined {
    return chatTranslators.openai[protocol];
  }
}

export const openaiChatSurface: SurfaceSpec = {
  outputCap: chatOutputCap,
  endpoint: 'chat',
  operation: 'chat',
  kind: 'chat',
  modelsPath: '/v1/models',
  maxReplyBytes: 32 * 1024 * 1024,
  validate(req) {
    const body = req.body.json;
    validateMessages(body);
    optionalNumber(body, 'temperature', 0, 2);
    optionalNumber(body, 'top_p', 0, 1);
    // Upstreams differ in which of the two they honour when both are sent: reserve for the larger.
    const maxOutputTokens = maxOf(optionalInt(body, 'max_tokens', 1), optionalInt(body, 'max_completion_tokens', 1));
    const n = optionalInt(body, 'n', 1);
    if (n !== undefined && n > MAX_CHOICES) throw invalidField('n', `"n" must be at most ${MAX_CHOICES}.`);
    const stream = optionalBoolean(body, 'stream') === true;
    const stop = body.stop;
    if (stop !== undefined && stop !== null && typeof stop !== 'string' && !(Array.isArray(stop) && stop.every((s) => typeof s === 'string'))) {
      throw invalidField('stop', '"stop" must be a string or an array of strings.');
    }
    if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) throw invalidField('tools', '"tools" must be an array.');
    const responseFormat = optionalObject(body, 'response_format');
    optionalObject(body, 'stream_options');
    const task = serviceTask(body);
    return new ChatRequest(body, stream, maxOutputTokens, n ?? 1, responseFormat?.type === 'json_object', task);
  },
};
