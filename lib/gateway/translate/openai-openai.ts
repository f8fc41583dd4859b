// OpenAI chat client -> OpenAI chat upstream: the identity. The client's body goes upstream as its
// own bytes (only `model`, the `service` options and, for streams, `stream_options` change), and
// the upstream's reply comes back as it came, with the gateway's cost spliced in.
import type { OpenAIChat } from '@/lib/gateway/translate/wire';
import { upstreamObject } from '@/lib/gateway/translate/upstream-json';
import { isObject, objectsOf } from '@/lib/gateway/translate/wire/json';
import { openaiUsage } from '@/lib/gateway/translate/usage';
import { upstreamBody, type JsonObject } from '@/lib/gateway/body';
import { UpstreamFailure } from '@/lib/gateway/upstream';
import { chunkHead, clientUsage, serviceMember, streamEnd, wantsStreamUsage } from '@/lib/gateway/translate/openai-client';
import type { CallInfo, Settlement, StreamTranslator, TranslatedReply, Translator, UpstreamUsage } from '@/lib/gateway/translate/types';

/** Generated text of a message or delta (content, refusal, tool arguments, reasoning): for estimates. */
function generatedText(m: JsonObject | undefined): string {
  if (!m) return '';
  let text = typeof m.content === 'string' ? m.content : '';
  if (typeof m.reasoning_content === 'string') text += m.reasoning_content;
  if (Array.isArray(m.tool_calls)) {
    for (const c of m.tool_calls) {
      const args = isObject(c) && isObject(c.function) ? c.function.arguments : undefined;
      if (typeof args === 'string') text += args;
    }
  }
  return text;
}

class OpenaiStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private id = '';
  private model = '';
  private created = 0;

  constructor(private readonly wantsUsage: boolean) {}

  push(ev: { data: string }): string {
    const data = ev.data;
    if (data === '[DONE]') {
      this.finished = true;
      return '';
    }
    if (data === '') return '';
    const parsed = upstreamObject<OpenAIChat.ChatCompletionChunk>(data, 'the stream');
    if (parsed.error) throw new UpstreamFailure('status', `upstream stream error: ${JSON.stringify(parsed.error).slice(0, 200)}`);
    this.id ||= String(parsed.id ?? '');
    this.model ||= String(parsed.model ?? '');
    this.created ||= Number(parsed.created ?? 0);
    const choices = parsed.choices;
    if (Array.isArray(choices)) {
      for (const c of choices) {
        if (!isObject(c)) continue;
        this.completion += generatedText(isObject(c.delta) ? c.delta : undefined);
        if (c.finish_reason) this.finished = true;
      }
    }
    const u = openaiUsage(parsed.usage, parsed.service_tier);
    if (u) this.usage = u;
    // The usage chunk (always asked for: billing needs it) goes out at the end, priced.
    if (u && (!choices || (Array.isArray(choices) && choices.length === 0))) return '';
    return `data: ${data}\n\n`;
  }

  end(s: Settlement): string {
    return streamEnd(chunkHead(this.id, this.created, this.model), s, this.wantsUsage);
  }
}

/** A whole reply: the generated text is gathered only if an estimate needs it (no usage reported). */
class OpenaiReply implements TranslatedReply {
  constructor(
    private readonly text: string,
    private readonly parsed: JsonObject,
    readonly usage: UpstreamUsage | null,
    private readonly call: CallInfo,
  ) {}

  get completion(): string {
    // response() let through only a reply whose `choices` is a list.
    return objectsOf(this.parsed.choices)
      .map((c) => generatedText(isObject(c.message) ? c.message : undefined))
      .join('');
  }

  render(s: Settlement): string {
    const { text, parsed } = this;
    const end = text.lastIndexOf('}');
    if (
      this.usage &&
      parsed.object === 'chat.completion' &&
      typeof parsed.id === 'string' &&
      parsed.id.startsWith('chatcmpl-') &&
      parsed.service === undefined &&
      end > 0
    ) {
      // The common case: the upstream's reply is already in OpenAI's shape, so it goes out as
      // it came, with our `service` member spliced in before the closing brace.
      return `${text.slice(0, end)},"service":${serviceMember(s)}}`;
    }
    if (typeof parsed.id !== 'string' || !parsed.id.startsWith('chatcmpl-'))
      parsed.id = `chatcmpl-${typeof parsed.id === 'string' ? parsed.id : this.call.requestId}`;
    parsed.object = 'chat.completion';
    if (!parsed.usage) parsed.usage = clientUsage(s);
    parsed.service = '__SERVICE__';
    return JSON.stringify(parsed).replace('"__SERVICE__"', serviceMember(s));
  }
}

export const openaiToOpenai: Translator = {
  request(req, call) {
    const body = req.body.json;
    if (!call.stream) return { body: upstreamBody(req.body, { model: call.model.name, service: undefined }) };
    // A stream always asks for the usage chunk (billing needs it); the client sees it only if it asked.
    const streamOptions = wantsStreamUsage(req)
      ? body.stream_options
      : { ...(isObject(body.stream_options) ? body.stream_options : undefined), include_usage: true };
    return { body: upstreamBody(req.body, { model: call.model.name, service: undefined, stream_options: streamOptions }) };
  },

  response(text, call) {
    const parsed = upstreamObject<OpenAIChat.ChatCompletion>(text, 'the reply');
    if (!Array.isArray(parsed.choices)) throw new UpstreamFailure('protocol', 'upstream reply has no choices');
    return new OpenaiReply(text, parsed, openaiUsage(parsed.usage, parsed.service_tier), call);
  },

  stream: (_call, req) => new OpenaiStream(wantsStreamUsage(req)),

  // The caller's mistake as the upstream saw it: its status and body, unchanged.
  error: (status, text) => ({
    status,
    body: text || JSON.stringify({ error: { message: `upstream answered ${status}`, type: 'invalid_request_error', param: null, code: 'upstream_rejected' } }),
  }),
};
