// Anthropic Messages client -> Anthropic upstream: the identity (the mirror). The body goes upstream
// byte for byte (cache_control and unknown fields included; only `model` changes when the router
// serves another model), with the caller's anthropic-version / anthropic-beta; replies, stream
// events and errors come back exactly as the upstream sent them. Cost travels in headers only.
import type { Anthropic } from '@/lib/gateway/translate/wire';
import { upstreamObject } from '@/lib/gateway/translate/upstream-json';
import { isObject, objectsOf } from '@/lib/gateway/translate/wire/json';
import { usageCount } from '@/lib/billing/cost';
import { takeAnthropicUsage } from '@/lib/gateway/translate/usage';
import type { BuiltInTool, ToolCalls } from '@/lib/billing/tools';
import { maxCalls } from '@/lib/gateway/builtin-tools';
import { upstreamBody, type JsonObject } from '@/lib/gateway/body';
import { DEFAULT_ANTHROPIC_VERSION } from '@/lib/gateway/providers/anthropic';
import { GEMINI_SIGNATURE_PREFIX } from '@/lib/gateway/translate/anthropic-gemini';
import { leadingSystemTurns, turnsOf, type AnthropicTurn } from '@/lib/gateway/translate/anthropic-client';
import { UpstreamFailure } from '@/lib/gateway/upstream';
import type { ClientRequest, SseEvent, StreamTranslator, TranslatedReply, Translator, UpstreamCall, UpstreamUsage } from '@/lib/gateway/translate/types';

/** Server tools by the name of their `server_tool_use` blocks; code execution counts once a reply (priced per container). */
const SERVER_TOOL_NAMES: Record<string, BuiltInTool> = {
  web_search: 'web_search',
  web_fetch: 'web_fetch',
  code_execution: 'code_execution',
  bash_code_execution: 'code_execution',
  text_editor_code_execution: 'code_execution',
};

/** Counts one content block into `calls`, if it is a server tool's call. */
function countServerToolBlock(calls: ToolCalls, block: unknown): void {
  if (!isObject(block) || block.type !== 'server_tool_use' || typeof block.name !== 'string') return;
  const tool = SERVER_TOOL_NAMES[block.name];
  if (tool) calls[tool] = tool === 'code_execution' ? 1 : (calls[tool] ?? 0) + 1;
}

/**
 * Server tool calls of a reply: Anthropic's `usage.server_tool_use` counts (web_search_requests,
 * web_fetch_requests) where given, else the `server_tool_use` blocks counted (`blocks`).
 */
export function anthropicToolCalls(usage: unknown, blocks: ToolCalls): ToolCalls {
  const counts = isObject(usage) ? usage.server_tool_use : undefined;
  const reported: ToolCalls = {};
  if (isObject(counts)) {
    const search = usageCount(counts.web_search_requests);
    const fetch = usageCount(counts.web_fetch_requests);
    if (search !== undefined) reported.web_search = search;
    if (fetch !== undefined) reported.web_fetch = fetch;
  }
  return maxCalls(blocks, reported);
}

/** Generated text of content blocks (text, tool input, thinking): for estimates. */
export function anthropicGeneratedText(content: unknown): string {
  let text = '';
  for (const b of objectsOf(content)) {
    if (typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use') text += JSON.stringify(b.input ?? {});
    else if (typeof b.thinking === 'string') text += b.thinking;
  }
  return text;
}

/** The upstream headers of a mirrored call: the caller's protocol version and betas. */
export function mirrorHeaders(req: ClientRequest): UpstreamCall {
  const headers: Record<string, string> = { 'anthropic-version': req.headers['anthropic-version'] || DEFAULT_ANTHROPIC_VERSION };
  const beta = req.headers['anthropic-beta'];
  if (beta) headers['anthropic-beta'] = beta;
  // A 403 may answer a beta the caller asked for (the operator's key may not be entitled to it).
  return { body: '', headers, forbiddenIsCallers: Boolean(beta) };
}

class MirrorStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  toolCalls: ToolCalls | undefined = undefined;
  private readonly blocks: ToolCalls = {};

  push(ev: SseEvent): string {
    if (ev.data) {
      const data = upstreamObject<Anthropic.MessagesStreamEvent>(ev.data, 'the stream');
      const type = typeof data.type === 'string' ? data.type : ev.event;
      if (type === 'error' || ev.event === 'error')
        throw new UpstreamFailure('status', `upstream stream error: ${JSON.stringify(data.error ?? data).slice(0, 200)}`);
      if (type === 'message_start') this.usage = takeAnthropicUsage(this.usage, isObject(data.message) ? data.message.usage : undefined, false);
      else if (type === 'message_delta') {
        this.usage = takeAnthropicUsage(this.usage, data.usage, true);
        this.toolCalls = anthropicToolCalls(data.usage, maxCalls(this.toolCalls, this.blocks));
      } else if (type === 'message_stop') this.finished = true;
      else if (type === 'content_block_start') {
        countServerToolBlock(this.blocks, data.content_block);
        this.toolCalls = maxCalls(this.toolCalls, this.blocks);
      } else if (type === 'content_block_delta') {
        const d = isObject(data.delta) ? data.delta : {};
        if (typeof d.text === 'string') this.completion += d.text;
        else if (typeof d.partial_json === 'string') this.completion += d.partial_json;
        else if (typeof d.thinking === 'string') this.completion += d.thinking;
      }
    }
    return ev.raw;
  }

  end(): string {
    return '';
  }
}

/** A thinking block Anthropic did not sign (see withoutForeignThinking). */
function foreign(b: unknown): boolean {
  return isObject(b) && b.type === 'thinking' && typeof b.signature === 'string' && (b.signature === '' || b.signature.startsWith(GEMINI_SIGNATURE_PREFIX));
}

function hasForeignThinking(m: unknown): boolean {
  return isObject(m) && Array.isArray(m.content) && m.content.some(foreign);
}

/**
 * The conversation without thinking blocks Anthropic did not sign: those a translated reply gave
 * the client (signature "" from an OpenAI model, "gemini:…" from a Gemini one) would be refused
 * when the conversation moves to a Claude model. Undefined when there are none (the common case:
 * the body goes as it came).
 */
function withoutForeignThinking(messages: unknown): unknown[] | undefined {
  if (!Array.isArray(messages) || !messages.some(hasForeignThinking)) return undefined;
  return messages.map((m) => {
    return isObject(m) && Array.isArray(m.content) && m.content.some(foreign) ? { ...m, content: m.content.filter((b) => !foreign(b)) } : m;
  });
}

/**
 * System-role messages inside `messages` (Anthropic refuses them; Claude Code sends one for a model
 * name it does not know, which an operator may serve on an Anthropic channel): those that open the
 * conversation join the top-level system prompt, later ones become user text in their place (after
 * the tool results they would otherwise split from their calls). Undefined when there are none.
 */
function withSystemMessagesFolded(json: JsonObject, messages: unknown[]): { system?: unknown; messages: unknown[] } | undefined {
  if (!messages.some((m) => isObject(m) && m.role === 'system')) return undefined;
  let turns: AnthropicTurn[];
  try {
    turns = turnsOf({ messages });
  } catch {
    return undefined; // malformed: Anthropic answers it
  }
  const lead = leadingSystemTurns(turns);
  const out: { system?: unknown; messages: unknown[] } = {
    messages: turns.slice(lead).map((t) => (t.role === 'system' ? { role: 'user', content: t.blocks } : { role: t.role, content: t.blocks })),
  };
  if (lead > 0) {
    const system = typeof json.system === 'string' ? [{ type: 'text', text: json.system }] : Array.isArray(json.system) ? json.system : [];
    out.system = [...system, ...turns.slice(0, lead).flatMap((t) => t.blocks)];
  }
  return out;
}

/** A whole reply, passed on as it came; its generated text is gathered only if an estimate needs it. */
class MirrorReply implements TranslatedReply {
  readonly toolCalls: ToolCalls;

  constructor(
    private readonly text: string,
    private readonly content: unknown,
    readonly usage: UpstreamUsage | null,
    reportedUsage: unknown,
  ) {
    const blocks: ToolCalls = {};
    if (Array.isArray(content)) for (const b of content) countServerToolBlock(blocks, b);
    this.toolCalls = anthropicToolCalls(reportedUsage, blocks);
  }

  get completion(): string {
    return anthropicGeneratedText(this.content);
  }

  render(): string {
    return this.text;
  }
}

export const anthropicToAnthropic: Translator = {
  request(req, call) {
    const json = req.body.json;
    const messages = withoutForeignThinking(json.messages) ?? json.messages;
    const folded = Array.isArray(messages) ? withSystemMessagesFolded(json, messages) : undefined;
    const members: Record<string, unknown> = { model: call.model.name };
    if (folded) Object.assign(members, folded);
    else if (messages !== json.messages) members.messages = messages;
    return { ...mirrorHeaders(req), body: upstreamBody(req.body, members) };
  },

  response(text) {
    const parsed = upstreamObject<Anthropic.Message>(text, 'the reply');
    if (!Array.isArray(parsed.content)) {
      throw new UpstreamFailure('protocol', 'upstream reply is not a message');
    }
    return new MirrorReply(text, parsed.content, takeAnthropicUsage(null, parsed.usage, true), parsed.usage);
  },

  stream: () => new MirrorStream(),

  error: (status, text) => ({
    status,
    body: text || JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `upstream answered ${status}` } }),
  }),
};

/** count_tokens on an Anthropic channel: forwarded like a message, answered as the upstream answers. */
export const anthropicCountTokens: Translator = {
  request: anthropicToAnthropic.request,
  response: (text) => ({ usage: null, completion: '', render: () => text }),
  stream: anthropicToAnthropic.stream,
  error: anthropicToAnthropic.error,
};
