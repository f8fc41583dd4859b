// POST /v1/anthropic/v1/messages and …/count_tokens: what an Anthropic Messages client (the SDK,
// Claude Code) may send, and what the pipeline needs of it.
import type { PreparedRequest, SurfaceSpec } from '@/lib/gateway/pipeline';
import type { RequestNeeds } from '@/lib/gateway/router';
import { messagesOutputCap } from '@/lib/gateway/admission/clamp';
import { optionalBoolean, invalidField, type JsonObject } from '@/lib/gateway/body';
import { builtInToolsOf, type BuiltInToolUse } from '@/lib/gateway/builtin-tools';
import { countMessageTokens, countTokens, textOf, type CountSignal } from '@/lib/gateway/tokens';
import { chatTranslators } from '@/lib/gateway/translate';
import type { Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';
import { anthropicCountTokens } from '@/lib/gateway/translate/anthropic-anthropic';

function requireModelField(body: JsonObject): void {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalidField('model', 'model: Field required (a model name string).');
}

function requireMessages(body: JsonObject): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalidField('messages', 'messages: must be a non-empty array of messages.');
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalidField(`messages.${i}`, `messages.${i}: must be an object.`);
  }
}

/** Our count of the prompt (system and messages); with a limit, counting stops once past it. */
async function estimatePrompt(body: JsonObject, limit = Infinity, signal?: CountSignal): Promise<number> {
  const system = body.system ? await countTokens(textOf(body.system), limit, signal) : 0;
  return system > limit ? system : system + (await countMessageTokens(body.messages, limit - system, signal));
}

/** A valid Messages request, as the pipeline reads it; its hooks are methods, so that a request makes one object. */
class MessagesRequest implements PreparedRequest {
  readonly choices = 1;
  readonly billed = true;
  /** Server tools billed per call (web search, code execution), each bounded by its `max_uses`. */
  readonly builtInTools: BuiltInToolUse[];

  constructor(
    private readonly body: JsonObject,
    readonly stream: boolean,
    readonly maxOutputTokens: number,
  ) {
    this.builtInTools = builtInToolsOf(body, (i) => `tools.${i}.type`, 'max_uses');
  }

  async autoNeeds(limit: number, signal: CountSignal): Promise<RequestNeeds> {
    return {
      tools: Array.isArray(this.body.tools) && this.body.tools.length > 0,
      json: false,
      promptTokens: await estimatePrompt(this.body, limit, signal),
      maxOutputTokens: this.maxOutputTokens,
    };
  }

  estimatePrompt(): Promise<number> {
    return estimatePrompt(this.body);
  }

  translator(protocol: UpstreamProtocol): Translator | undefined {
    return chatTranslators.anthropic[protocol];
  }
}

export const anthropicMessagesSurface: SurfaceSpec = {
  outputCap: messagesOutputCap,
  endpoint: 'anthropic',
  operation: 'chat',
  kind: 'chat',
  modelsPath: '/v1/anthropic/v1/models',
  modelNotFoundStatus: 404,
  maxReplyBytes: 32 * 1024 * 1024,
  // Minimal checks before anything goes upstream; the upstream validates the rest.
  validate(req) {
    const body = req.body.json;
    requireModelField(body);
    const maxTokens = body.max_tokens;
    if (maxTokens === undefined || maxTokens === null) throw invalidField('max_tokens', 'max_tokens: Field required.');
    if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)
      throw invalidField('max_tokens', 'max_tokens: must be a positive integer.');
    requireMessages(body);
    return new MessagesRequest(body, optionalBoolean(body, 'stream') === true, maxTokens);
  },
};

/**
 * count_tokens: authenticated, admitted under its own request rate and concurrency, logged and not
 * billed. On an Anthropic channel it is forwarded as it came; a model no Anthropic channel serves
 * is counted here, with the gateway's tokenizer (the count the gateway itself would estimate).
 */
export const anthropicCountTokensSurface: SurfaceSpec = {
  endpoint: 'count_tokens',
  operation: 'count_tokens',
  kind: 'chat',
  modelsPath: '/v1/anthropic/v1/models',
  modelNotFoundStatus: 404,
  maxReplyBytes: 1024 * 1024,
  validate(req) {
    const body = req.body.json;
    requireModelField(body);
    requireMessages(body);
    return {
      stream: false,
      choices: 1,
      billed: false,
      noFallback: true,
      estimatePrompt: () => estimatePrompt(body),
      translator: (protocol) => (protocol === 'anthropic' ? anthropicCountTokens : undefined),
      local: async () => JSON.stringify({ input_tokens: await estimatePrompt(body) }),
    };
  },
};
