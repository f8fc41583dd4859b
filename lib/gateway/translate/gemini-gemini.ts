// Gemini client -> Gemini upstream: the identity. The body goes upstream byte for byte (thought
// signatures, safety settings, built-in tools and members added later included; the model is in
// the path); replies, stream chunks and errors come back as the upstream sent them. Cost travels
// in headers only.
import type { Gemini } from '@/lib/gateway/translate/wire';
import { upstreamObject } from '@/lib/gateway/translate/upstream-json';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import { UpstreamFailure } from '@/lib/gateway/upstream';
import { geminiUsage } from '@/lib/gateway/translate/usage';
import { SKIP_THOUGHT_SIGNATURE } from '@/lib/gateway/translate/openai-gemini';
import { ANTHROPIC_SIGNATURE_PREFIX, ChunkFramer, type GeminiClientOptions } from './gemini-client';
import type { ClientRequest, JsonObject, SseEvent, StreamTranslator, TranslatedReply, Translator, UpstreamUsage } from './types';

const FOREIGN_SIGNATURE = Buffer.from(`"thoughtSignature":"${ANTHROPIC_SIGNATURE_PREFIX}`);

/**
 * The body, with the thought signatures a Claude model's reply left (ours, see sealThinking)
 * replaced by Google's documented placeholder: Gemini refuses a signature it did not make, and a
 * conversation may move to a Gemini model mid-way. Untouched (the client's bytes) when there are none.
 */
function requestBody(req: ClientRequest): string | Buffer {
  const raw = req.body.raw;
  if (!raw.includes(FOREIGN_SIGNATURE)) return raw;
  const contents = req.body.json.contents;
  if (!Array.isArray(contents)) return raw;
  const cleaned = contents.map((c) => {
    if (!isObject(c) || !Array.isArray(c.parts)) return c;
    return {
      ...c,
      parts: c.parts.map((p: unknown) =>
        isObject(p) && typeof p.thoughtSignature === 'string' && p.thoughtSignature.startsWith(ANTHROPIC_SIGNATURE_PREFIX)
          ? { ...p, thoughtSignature: SKIP_THOUGHT_SIGNATURE }
          : p,
      ),
    };
  });
  return JSON.stringify({ ...req.body.json, contents: cleaned });
}

/** Generated text of a response's parts (text, thoughts, call arguments): for estimates. */
function generatedText(data: JsonObject): string {
  const candidate = Array.isArray(data.candidates) ? data.candidates[0] : undefined;
  const content = isObject(candidate) ? candidate.content : undefined;
  const parts = isObject(content) && Array.isArray(content.parts) ? content.parts : [];
  let text = '';
  for (const p of parts) {
    if (!isObject(p)) continue;
    if (typeof p.text === 'string') text += p.text;
    else if (isObject(p.functionCall)) text += JSON.stringify(p.functionCall.args ?? {});
  }
  return text;
}

function finishedIn(data: JsonObject): boolean {
  const candidate = Array.isArray(data.candidates) ? data.candidates[0] : undefined;
  const reason = isObject(candidate) ? candidate.finishReason : undefined;
  if (typeof reason === 'string' && reason !== '' && reason !== 'FINISH_REASON_UNSPECIFIED') return true;
  // A prompt blocked outright has no candidate, only promptFeedback.
  return !candidate && isObject(data.promptFeedback) && typeof data.promptFeedback.blockReason === 'string';
}

function parse(text: string, what: string): Received<Gemini.GeminiResponse> {
  const parsed = upstreamObject<Gemini.GeminiResponse>(text, what);
  if (isObject(parsed.error)) {
    const err = parsed.error;
    throw new UpstreamFailure(
      'status',
      `upstream error: ${String(err.status ?? '')}: ${String(err.message ?? '').slice(0, 200)}`,
      typeof err.code === 'number' ? err.code : undefined,
    );
  }
  return parsed;
}

class MirrorReply implements TranslatedReply {
  constructor(
    private readonly text: string,
    private readonly data: JsonObject,
    readonly usage: UpstreamUsage | null,
  ) {}

  get completion(): string {
    return generatedText(this.data);
  }

  render(): string {
    return this.text;
  }
}

/**
 * The upstream's SSE events as they came; for a client that asked for Google's JSON-array stream
 * (no alt=sse: the upstream is always asked for SSE) each event's data becomes an element.
 */
class MirrorStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly framer: ChunkFramer | null;

  constructor(opts: GeminiClientOptions) {
    this.framer = opts.framing === 'array' ? new ChunkFramer('array') : null;
  }

  push(ev: SseEvent): string {
    if (ev.data === '') return this.framer ? '' : ev.raw;
    const data = parse(ev.data, 'the stream');
    const usage = geminiUsage(data.usageMetadata, false);
    if (finishedIn(data)) this.finished = true;
    // Counts are cumulative: the latest report counts, final once the candidate has finished.
    if (usage) this.usage = { ...usage, completionFinal: this.finished };
    this.completion += generatedText(data);
    return this.framer ? this.framer.frame(ev.data) : ev.raw;
  }

  end(): string {
    return this.framer ? this.framer.close() : '';
  }
}

export const geminiToGemini = (opts: GeminiClientOptions): Translator => ({
  request: (req) => ({ body: requestBody(req) }),
  response(text) {
    const data = parse(text, 'the reply');
    return new MirrorReply(text, data, geminiUsage(data.usageMetadata, true));
  },
  stream: () => new MirrorStream(opts),
  error: (status, text) => ({
    status,
    body: text || JSON.stringify({ error: { code: status, message: `upstream answered ${status}`, status: 'INVALID_ARGUMENT' } }),
  }),
});

/** countTokens on a Gemini channel: forwarded as it came, answered as the upstream answers. */
export const geminiCountTokens: Translator = {
  request: (req) => ({ body: req.body.raw }),
  response: (text) => ({ usage: null, completion: '', render: () => text }),
  stream: () => new MirrorStream({ framing: 'sse', includeThoughts: false }),
  error: (status, text) => ({ status, body: text }),
};
