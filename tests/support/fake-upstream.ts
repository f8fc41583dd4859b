/**
 * Fake LLM upstream for tests: a plain node:http server that speaks the OpenAI
 * (chat completions, embeddings, models) and Anthropic (messages, count_tokens,
 * models) HTTP protocols, records every request byte-exact, and can be told to
 * misbehave per request (see `Fault`).
 *
 * Fault selection per request: `x-fake-fault` request header (JSON Fault) >
 * the `faultFor` option (a function of the request, e.g. of a marker in its
 * prompt: deterministic under concurrency) > next queued fault (queue(),
 * consumed in order by every request) > default.
 *
 * Control plane (for when the fake runs as a separate process, see
 * fake-upstream-cli.ts) under `/__fake/` — these requests are NOT recorded and
 * do NOT consume faults:
 *   POST /__fake/queue    body: Fault | Fault[]
 *   POST /__fake/default  body: Fault
 *   POST /__fake/reply    body: {"reply": string}
 *   POST /__fake/reset
 *   GET  /__fake/requests -> RecordedRequest[]
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { getEncoding, type Tiktoken } from 'js-tiktoken';

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** raw text exactly as received */
  body: string;
  json?: unknown;
}

export type Fault =
  | { type: 'ok' }
  | { type: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { type: 'refuse' }
  | { type: 'hang' }
  | { type: 'delay'; ms: number }
  | { type: 'malformed' }
  | { type: 'cut'; afterChunks: number }
  | { type: 'no-done' }
  | { type: 'stall'; afterChunks: number }
  | { type: 'huge'; bytes: number }
  | { type: 'no-usage' };

export interface FakeUpstreamOptions {
  port?: number;
  chunkDelayMs?: number;
  reply?: string;
  /** embedding model -> dimensions; default 1536 */
  dims?: Record<string, number>;
  /** picks the fault of a request from its content (undefined: queue, then default) */
  faultFor?: (req: RecordedRequest) => Fault | undefined;
  /** keep every request in `requests` (default true; long soak runs turn it off) */
  record?: boolean;
}

export interface FakeUpstream {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /**
   * Requests whose headers arrived, counted at once, including any the caller abandoned before the
   * body was read (a cancelled speculative call). `requests` records a request only once its body
   * was read, which a connection closed right after the request was written can pre-empt.
   */
  received(): number;
  /** queue faults for the next requests, consumed in order; when empty the default applies */
  queue(...faults: Fault[]): void;
  setDefault(fault: Fault): void;
  setReply(text: string): void;
  /** clear requests, queue, default=ok (also: reply back to the initial one, prompt-cache memory cleared) */
  reset(): void;
  openConnections(): number;
  /** closes all sockets too */
  close(): Promise<void>;
}

export const DEFAULT_REPLY = 'Hello from the fake upstream.';
export const DEFAULT_EMBEDDING_DIMS = 1536;
/** arguments the fake always puts in a tool call */
export const TOOL_CALL_ARGUMENTS = '{"city":"Paris"}';
/** cache_creation_input_tokens / cache_read_input_tokens reported by /v1/messages when cache_control is used */
export const CACHE_TOKENS = 100;

export const OPENAI_MODELS = ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'];
export const ANTHROPIC_MODELS: { id: string; display_name: string; created_at: string }[] = [
  { id: 'claude-sonnet-4-6', display_name: 'Claude Sonnet 4.6', created_at: '2026-02-17T00:00:00Z' },
  { id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-01T00:00:00Z' },
];

// ---------------------------------------------------------------------------
// Token counting (cl100k_base, deterministic)
// ---------------------------------------------------------------------------

let encoder: Tiktoken | undefined;
function enc(): Tiktoken {
  encoder ??= getEncoding('cl100k_base');
  return encoder;
}

/** Long runs without whitespace are BPE'd in quadratic time by js-tiktoken, so they are
 * split into 256-char pieces (memoised). Normal text is counted exactly. */
const LONG_RUN = /\S{257,}/g;
const RUN_PIECE = 256;
const pieceMemo = new Map<string, number>();

function segments(text: string): { text: string; memo: boolean }[] {
  const out: { text: string; memo: boolean }[] = [];
  let last = 0;
  for (const m of text.matchAll(LONG_RUN)) {
    const idx = m.index ?? 0;
    if (idx > last) out.push({ text: text.slice(last, idx), memo: false });
    for (let i = 0; i < m[0].length; i += RUN_PIECE) out.push({ text: m[0].slice(i, i + RUN_PIECE), memo: true });
    last = idx + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), memo: false });
  return out;
}

function segmentTokens(seg: { text: string; memo: boolean }): number {
  if (!seg.memo) return enc().encode(seg.text).length;
  let n = pieceMemo.get(seg.text);
  if (n === undefined) {
    n = enc().encode(seg.text).length;
    if (pieceMemo.size > 10_000) pieceMemo.clear();
    pieceMemo.set(seg.text, n);
  }
  return n;
}

/** How long after its last chunk a mid-stream 'cut' breaks the connection. */
const MID_STREAM_CUT_MS = 100;

/**
 * Tokens of a 'huge' reply (one letter repeated): what countTokens answers for it (cl100k_base
 * encodes such a run 8 letters to a token; checked for lengths 1 to 5 MiB + 5), without running the
 * tokenizer over megabytes: that takes ~0.5 s per 5 MB here, which on a loaded machine outlasts a
 * test gateway's first-byte timeout, and overflows the stack above ~30 MB.
 */
function hugeTokens(length: number): number {
  return Math.floor(length / 8) + countTokens('x'.repeat(length % 8));
}

/** Deterministic token count used for all usage numbers (cl100k_base). */
export function countTokens(text: string): number {
  if (!text) return 0;
  let total = 0;
  for (const seg of segments(text)) total += segmentTokens(seg);
  return total;
}

/** Truncate text to at most `max` tokens (consistent with countTokens). */
function truncateTokens(text: string, max: number): { text: string; tokens: number; truncated: boolean } {
  const total = countTokens(text);
  if (total <= max) return { text, tokens: total, truncated: false };
  let out = '';
  let used = 0;
  for (const seg of segments(text)) {
    const n = segmentTokens(seg);
    if (used + n <= max) {
      out += seg.text;
      used += n;
      continue;
    }
    const toks = enc().encode(seg.text).slice(0, max - used);
    out += enc().decode(toks);
    used += toks.length;
    break;
  }
  return { text: out, tokens: max, truncated: true };
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

type Json = Record<string, unknown>;
type Protocol = 'openai' | 'anthropic';

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function rid(n = 24): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[bytes[i]! % alphabet.length];
  return s;
}

function nowSec(): number {
  return Math.floor(Date.now() / 1000);
}

/** Split text into stream pieces: words with their leading whitespace (like BPE tokens);
 * long runs are cut to 16 KiB so 'huge' replies stream in many chunks. Concatenation == text. */
function streamPieces(text: string): string[] {
  const words = text.match(/\s*\S+|\s+/g) ?? [];
  const out: string[] = [];
  const MAX = 16 * 1024;
  for (const w of words) {
    if (w.length <= MAX) out.push(w);
    else for (let i = 0; i < w.length; i += MAX) out.push(w.slice(i, i + MAX));
  }
  return out;
}

/** Text of an OpenAI message content (string or array of parts). */
function openaiContentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : isObj(p) && typeof p.refusal === 'string' ? p.refusal : ''))
      .join('');
  }
  return '';
}

function openaiMessageText(m: unknown): string {
  if (!isObj(m)) return '';
  let t = openaiContentText(m.content);
  if (Array.isArray(m.tool_calls)) {
    for (const tc of m.tool_calls) {
      if (isObj(tc) && isObj(tc.function)) {
        t += String(tc.function.name ?? '') + String(tc.function.arguments ?? '');
      }
    }
  }
  return t;
}

/** Text of an Anthropic content (string or array of blocks). */
function anthropicContentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let t = '';
  for (const b of content) {
    if (!isObj(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') t += b.text;
    else if (b.type === 'tool_use') t += String(b.name ?? '') + JSON.stringify(b.input ?? {});
    else if (b.type === 'tool_result') t += anthropicContentText(b.content);
    else if (b.type === 'thinking' && typeof b.thinking === 'string') t += b.thinking;
  }
  return t;
}

function echoOf(text: string): string | undefined {
  const i = text.indexOf('ECHO:');
  if (i < 0) return undefined;
  return text.slice(i + 'ECHO:'.length).replace(/^\s+/, '');
}

function hasCacheControl(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasCacheControl);
  if (!isObj(v)) return false;
  if (v.cache_control != null) return true;
  return hasCacheControl(v.content);
}

function openaiErrorType(status: number): { type: string; code: string | null; message: string } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' };
  if (status === 403) return { type: 'permission_error', code: null, message: 'You are not allowed to access this resource.' };
  if (status === 404) return { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' };
  if (status === 503) return { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' };
  if (status >= 500) return { type: 'server_error', code: null, message: 'The server had an error while processing your request.' };
  return { type: 'invalid_request_error', code: null, message: 'Invalid request.' };
}

function anthropicErrorType(status: number): { type: string; message: string } {
  switch (status) {
    case 400:
      return { type: 'invalid_request_error', message: 'Invalid request.' };
    case 401:
      return { type: 'authentication_error', message: 'invalid x-api-key' };
    case 402:
      return { type: 'billing_error', message: 'Billing error.' };
    case 403:
      return { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' };
    case 404:
      return { type: 'not_found_error', message: 'The requested resource could not be found.' };
    case 408:
      return { type: 'timeout_error', message: 'Request timed out.' };
    case 413:
      return { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' };
    case 429:
      return { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' };
    case 529:
      return { type: 'overloaded_error', message: 'Overloaded' };
    default:
      return status >= 500
        ? { type: 'api_error', message: 'Internal server error' }
        : { type: 'invalid_request_error', message: 'Invalid request.' };
  }
}

function openaiError(message: string, param: string | null = null, type = 'invalid_request_error', code: string | null = null) {
  return { error: { message, type, param, code } };
}

function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

// Deterministic embedding: PRNG seeded from sha256(text), unit-normalised, float32-exact values.
function embeddingFor(text: string, dims: number): number[] {
  const h = createHash('sha256').update(text).digest();
  let a = h.readUInt32LE(0) | 0;
  let b = h.readUInt32LE(4) | 0;
  let c = h.readUInt32LE(8) | 0;
  let d = h.readUInt32LE(12) | 0;
  // sfc32
  const rnd = () => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  const v = new Array<number>(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    const x = rnd() * 2 - 1;
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) v[i] = Math.fround(v[i]! / norm);
  return v;
}

function float32Base64(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i]!, i * 4);
  return buf.toString('base64');
}

function parseFault(v: unknown): Fault | undefined {
  if (!isObj(v) || typeof v.type !== 'string') return undefined;
  const known = ['ok', 'status', 'refuse', 'hang', 'delay', 'malformed', 'cut', 'no-done', 'stall', 'huge', 'no-usage'];
  if (!known.includes(v.type)) return undefined;
  return v as unknown as Fault;
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

interface Ctx {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  fault: Fault;
  protocol: Protocol;
  /** set when the client went away or the server is closing */
  gone: () => boolean;
}

/** A planned SSE frame; `terminal` frames are dropped by 'no-done'. */
interface Frame {
  data: string;
  terminal?: boolean;
}

export async function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const chunkDelayMs = opts.chunkDelayMs ?? 0;
  const initialReply = opts.reply ?? DEFAULT_REPLY;
  const dims = opts.dims ?? {};

  const requests: RecordedRequest[] = [];
  let receivedCount = 0;
  const faultQueue: Fault[] = [];
  let defaultFault: Fault = { type: 'ok' };
  let reply = initialReply;
  const seenCacheKeys = new Set<string>();

  const sockets = new Set<Socket>();
  const timers = new Map<NodeJS.Timeout, () => void>();
  let closing = false;

  function sleep(ms: number): Promise<void> {
    if (closing) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.set(t, resolve);
    });
  }

  function destroyAfterFlush(res: http.ServerResponse): void {
    const sock = res.socket;
    if (!sock || sock.destroyed) return;
    sock.write('', () => sock.destroy());
  }

  // ---- low-level responders -------------------------------------------------

  function baseHeaders(ctx: Ctx): Record<string, string> {
    return ctx.protocol === 'anthropic' ? { 'request-id': `req_${rid(24)}` } : { 'x-request-id': `req_${rid(24)}` };
  }

  /** Plain JSON response, no faults applied (errors, validation). */
  function sendJson(ctx: Ctx, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (ctx.gone()) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const reason = http.STATUS_CODES[status] ?? (status === 529 ? 'Overloaded' : 'Unknown');
    ctx.res.writeHead(status, reason, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...baseHeaders(ctx),
      ...headers,
    });
    ctx.res.end(text);
  }

  /** Successful JSON answer with the non-stream fault semantics applied. */
  function answerJson(ctx: Ctx, body: unknown, malformedPrefix: string): void {
    if (ctx.gone()) return;
    const f = ctx.fault;
    if (f.type === 'malformed') {
      sendJson(ctx, 200, malformedPrefix);
      return;
    }
    if (f.type === 'huge') {
      // As a provider sends a large reply: the head at once, then the body in pieces (chunked).
      // Serialising tens of MB in one go could take longer, on a loaded machine, than a test
      // gateway's first-byte or idle timeout, which the gateway would then report instead of the
      // size cap. The reply's text (one letter repeated, nothing to escape) is written 1 MiB at a time.
      const size = Math.max(0, Math.floor(f.bytes));
      const mark = '\u0000huge\u0000';
      const [before, after] = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'string' && v.length === size && size > 0 ? mark : v)).split(JSON.stringify(mark));
      ctx.res.writeHead(200, { 'content-type': 'application/json', ...baseHeaders(ctx) });
      ctx.res.flushHeaders();
      if (after === undefined) return void ctx.res.end(before);
      ctx.res.write(`${before}"`);
      const piece = 'x'.repeat(Math.min(size, 1024 * 1024));
      for (let left = size; left > 0; left -= piece.length) ctx.res.write(left >= piece.length ? piece : piece.slice(0, left));
      ctx.res.end(`"${after}`);
      return;
    }
    const text = JSON.stringify(body);
    if (f.type === 'cut' || f.type === 'stall') {
      // headers promise the full body; only half of it arrives
      const buf = Buffer.from(text);
      ctx.res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(buf.length),
        ...baseHeaders(ctx),
      });
      const half = buf.subarray(0, Math.floor(buf.length / 2));
      if (f.type === 'cut') ctx.res.write(half, () => destroyAfterFlush(ctx.res));
      else ctx.res.write(half);
      return;
    }
    sendJson(ctx, 200, text);
  }

  /** Stream SSE frames with stream-fault semantics. `malformedFrame` is inserted after the first frame on 'malformed'. */
  async function streamFrames(ctx: Ctx, planned: Frame[], malformedFrame: string): Promise<void> {
    if (ctx.gone()) return;
    const f = ctx.fault;
    let frames = planned;
    if (f.type === 'no-done') frames = frames.filter((fr) => !fr.terminal);
    if (f.type === 'malformed') frames = [frames[0]!, { data: malformedFrame }, ...frames.slice(1)];
    let limit = frames.length;
    if (f.type === 'cut' || f.type === 'stall') limit = Math.max(0, Math.min(frames.length, Math.floor(f.afterChunks)));

    const res = ctx.res;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...baseHeaders(ctx),
    });
    res.flushHeaders();

    for (let i = 0; i < limit; i++) {
      if (i > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs);
      if (ctx.gone()) return;
      res.write(frames[i]!.data);
    }
    if (ctx.gone()) return;
    if (f.type === 'cut') {
      // A stream cut mid-way breaks after what came before it was delivered. Cut at once, the break
      // could reach the gateway while it still holds the reply for a speculative admission (nothing
      // relayed yet: a failure before the first byte, served by the next channel), so the test
      // would depend on that race instead of testing a mid-stream break.
      if (limit > 0) await sleep(MID_STREAM_CUT_MS);
      if (ctx.gone()) return;
      destroyAfterFlush(res);
      return;
    }
    if (f.type === 'stall') return; // keep the connection open until the client gives up or close()
    res.end();
  }

  // ---- OpenAI ---------------------------------------------------------------

  function openaiAuthOk(ctx: Ctx): boolean {
    const auth = ctx.req.headers.authorization;
    if (typeof auth === 'string' && /^Bearer\s+\S+/i.test(auth)) return true;
    sendJson(
      ctx,
      401,
      openaiError(
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        null,
        'invalid_request_error',
        null,
      ),
    );
    return false;
  }

  async function openaiChat(ctx: Ctx, body: Json): Promise<void> {
    if (typeof body.model !== 'string' || !body.model) {
      sendJson(ctx, 400, openaiError('you must provide a model parameter', null));
      return;
    }
    const messages = body.messages;
    if (messages === undefined || messages === null) {
      sendJson(ctx, 400, openaiError("Missing required parameter: 'messages'.", 'messages'));
      return;
    }
    if (!Array.isArray(messages)) {
      sendJson(ctx, 400, openaiError("Invalid type for 'messages': expected an array of objects.", 'messages'));
      return;
    }
    if (messages.length === 0) {
      sendJson(ctx, 400, openaiError("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages'));
      return;
    }
    for (let i = 0; i < messages.length; i++) {
      const m: unknown = messages[i];
      if (!isObj(m) || typeof m.role !== 'string') {
        sendJson(ctx, 400, openaiError(`Missing required parameter: 'messages[${i}].role'.`, `messages[${i}].role`));
        return;
      }
    }
    const msgs = messages as Json[];
    const model = body.model;
    const fault = ctx.fault;
    const noUsage = fault.type === 'no-usage';
    const promptTokens = msgs.reduce((n, m) => n + countTokens(openaiMessageText(m)) + 3, 0);

    const last = msgs[msgs.length - 1]!;
    const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
    const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
    const toolChoice = body.tool_choice;
    let toolName: string | undefined;
    if (tools.length > 0 && toolChoice !== 'none' && last.role === 'user' && fault.type !== 'huge') {
      if (isObj(toolChoice) && isObj(toolChoice.function) && typeof toolChoice.function.name === 'string') {
        toolName = toolChoice.function.name;
      } else {
        const t0 = tools[0];
        toolName = isObj(t0) && isObj(t0.function) && typeof t0.function.name === 'string' ? t0.function.name : 'tool';
      }
    }

    let content: string;
    if (fault.type === 'huge') content = 'x'.repeat(Math.max(0, Math.floor(fault.bytes)));
    else if (last.role === 'tool') content = `The tool said: ${openaiContentText(last.content)}`;
    else {
      const echo = lastUser ? echoOf(openaiContentText(lastUser.content)) : undefined;
      if (echo !== undefined) content = echo;
      else if (isObj(body.response_format) && body.response_format.type === 'json_object') content = '{"answer":"ok"}';
      else content = reply;
    }

    const maxTokens =
      typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
    let finish: string = 'stop';
    let completionTokens: number;
    if (toolName !== undefined) {
      finish = 'tool_calls';
      completionTokens = countTokens(toolName + TOOL_CALL_ARGUMENTS);
    } else if (fault.type === 'huge' && maxTokens === undefined) {
      completionTokens = hugeTokens(content.length);
    } else if (maxTokens !== undefined && maxTokens >= 0) {
      const t = truncateTokens(content, maxTokens);
      content = t.text;
      completionTokens = t.tokens;
      if (t.truncated) finish = 'length';
    } else {
      completionTokens = countTokens(content);
    }
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    const id = `chatcmpl-${rid(29)}`;
    const created = nowSec();
    const callId = `call_${rid(24)}`;

    if (body.stream !== true) {
      const message =
        toolName !== undefined
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: callId, type: 'function', function: { name: toolName, arguments: TOOL_CALL_ARGUMENTS } }],
              refusal: null,
            }
          : { role: 'assistant', content, refusal: null };
      const out: Json = {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
      };
      if (!noUsage) out.usage = usage;
      answerJson(ctx, out, '{"id": "chatcmpl-');
      return;
    }

    const includeUsage = isObj(body.stream_options) && body.stream_options.include_usage === true && !noUsage;
    const chunk = (choices: unknown[], extra: Json = {}): Frame => {
      const c: Json = { id, object: 'chat.completion.chunk', created, model, choices };
      if (includeUsage) c.usage = null;
      Object.assign(c, extra);
      return { data: `data: ${JSON.stringify(c)}\n\n` };
    };
    const frames: Frame[] = [];
    if (toolName !== undefined) {
      frames.push(
        chunk([
          {
            index: 0,
            delta: {
              role: 'assistant',
              content: null,
              tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: toolName, arguments: '' } }],
            },
            logprobs: null,
            finish_reason: null,
          },
        ]),
      );
      for (const frag of ['{"', 'city', '":"', 'Paris', '"}']) {
        frames.push(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: frag } }] }, logprobs: null, finish_reason: null }]));
      }
    } else {
      frames.push(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
      for (const piece of streamPieces(content)) {
        frames.push(chunk([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }]));
      }
    }
    frames.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]));
    if (includeUsage) frames.push(chunk([], { usage }));
    frames.push({ data: 'data: [DONE]\n\n', terminal: true });
    await streamFrames(ctx, frames, `data: {"id": "${id}", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "\n\n`);
  }

  function openaiEmbeddings(ctx: Ctx, body: Json): void {
    if (typeof body.model !== 'string' || !body.model) {
      sendJson(ctx, 400, openaiError('you must provide a model parameter', null));
      return;
    }
    const input = body.input;
    if (input === undefined || input === null) {
      sendJson(ctx, 400, openaiError("Missing required parameter: 'input'.", 'input'));
      return;
    }
    let items: { key: string; tokens: number }[];
    if (typeof input === 'string') items = [{ key: input, tokens: countTokens(input) }];
    else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number')) {
      items = [{ key: JSON.stringify(input), tokens: input.length }];
    } else if (Array.isArray(input) && input.length > 0) {
      items = [];
      for (const x of input) {
        if (typeof x === 'string') items.push({ key: x, tokens: countTokens(x) });
        else if (Array.isArray(x) && x.length > 0 && x.every((y) => typeof y === 'number')) items.push({ key: JSON.stringify(x), tokens: x.length });
        else {
          sendJson(ctx, 400, openaiError("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input'));
          return;
        }
      }
    } else {
      sendJson(ctx, 400, openaiError("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input'));
      return;
    }
    if (items.some((it) => it.key === '')) {
      sendJson(ctx, 400, openaiError("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input'));
      return;
    }
    const fmt = body.encoding_format;
    if (fmt !== undefined && fmt !== 'float' && fmt !== 'base64') {
      sendJson(ctx, 400, openaiError(`Invalid value: '${String(fmt)}'. Supported values are: 'float' and 'base64'.`, 'encoding_format'));
      return;
    }
    const model = body.model;
    const d =
      typeof body.dimensions === 'number' && Number.isInteger(body.dimensions) && body.dimensions > 0
        ? body.dimensions
        : dims[model] ?? DEFAULT_EMBEDDING_DIMS;
    const data = items.map((it, index) => {
      const v = embeddingFor(it.key, d);
      return { object: 'embedding', index, embedding: fmt === 'base64' ? float32Base64(v) : v };
    });
    const tokens = items.reduce((n, it) => n + it.tokens, 0);
    const out: Json = { object: 'list', data, model };
    if (ctx.fault.type !== 'no-usage') out.usage = { prompt_tokens: tokens, total_tokens: tokens };
    answerJson(ctx, out, '{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1');
  }

  function openaiModels(ctx: Ctx, id?: string): void {
    const created = 1_700_000_000;
    const list = OPENAI_MODELS.map((m) => ({ id: m, object: 'model', created, owned_by: m.startsWith('text-') ? 'openai-internal' : 'system' }));
    if (id !== undefined) {
      const m = list.find((x) => x.id === id);
      if (!m) sendJson(ctx, 404, openaiError(`The model '${id}' does not exist`, 'model', 'invalid_request_error', 'model_not_found'));
      else answerJson(ctx, m, '{"id": "');
      return;
    }
    answerJson(ctx, { object: 'list', data: list }, '{"object": "list", "data": [');
  }

  // ---- Anthropic ------------------------------------------------------------

  function anthropicHeadersOk(ctx: Ctx): boolean {
    if (!ctx.req.headers['anthropic-version']) {
      sendJson(ctx, 400, anthropicError('invalid_request_error', 'anthropic-version: header is required'));
      return false;
    }
    // The real API takes `x-api-key`; OAuth-style `Authorization: Bearer` is also accepted (and is what
    // @anthropic-ai/sdk >= 1.x sends for `apiKey`).
    const key = ctx.req.headers['x-api-key'];
    const auth = ctx.req.headers.authorization;
    const hasBearer = typeof auth === 'string' && /^Bearer\s+\S+/i.test(auth);
    if ((typeof key !== 'string' || !key) && !hasBearer) {
      sendJson(ctx, 401, anthropicError('authentication_error', 'x-api-key header is required'));
      return false;
    }
    return true;
  }

  function anthropicValidate(ctx: Ctx, body: Json, needMaxTokens: boolean): Json[] | undefined {
    if (typeof body.model !== 'string' || !body.model) {
      sendJson(ctx, 400, anthropicError('invalid_request_error', 'model: Field required'));
      return undefined;
    }
    if (needMaxTokens && typeof body.max_tokens !== 'number') {
      sendJson(ctx, 400, anthropicError('invalid_request_error', 'max_tokens: Field required'));
      return undefined;
    }
    const messages = body.messages;
    if (messages === undefined || messages === null) {
      sendJson(ctx, 400, anthropicError('invalid_request_error', 'messages: Field required'));
      return undefined;
    }
    if (!Array.isArray(messages) || messages.length === 0) {
      sendJson(ctx, 400, anthropicError('invalid_request_error', 'messages: at least one message is required'));
      return undefined;
    }
    for (let i = 0; i < messages.length; i++) {
      const m: unknown = messages[i];
      if (!isObj(m) || (m.role !== 'user' && m.role !== 'assistant')) {
        sendJson(ctx, 400, anthropicError('invalid_request_error', `messages.${i}.role: Input should be 'user' or 'assistant'`));
        return undefined;
      }
    }
    return messages as Json[];
  }

  function anthropicInputTokens(body: Json, msgs: Json[]): number {
    let n = msgs.reduce((acc, m) => acc + countTokens(anthropicContentText(m.content)) + 3, 0);
    const sys = anthropicContentText(body.system);
    if (sys) n += countTokens(sys) + 3;
    return n;
  }

  async function anthropicMessages(ctx: Ctx, body: Json): Promise<void> {
    const msgs = anthropicValidate(ctx, body, true);
    if (!msgs) return;
    const model = body.model as string;
    const fault = ctx.fault;
    const noUsage = fault.type === 'no-usage';
    const inputTokens = anthropicInputTokens(body, msgs);

    // prompt caching accounting
    let cacheCreation = 0;
    let cacheRead = 0;
    if (body.cache_control != null || hasCacheControl(body.system) || hasCacheControl(msgs) || hasCacheControl(body.tools)) {
      const key = anthropicContentText(body.system);
      if (seenCacheKeys.has(key)) cacheRead = CACHE_TOKENS;
      else {
        seenCacheKeys.add(key);
        cacheCreation = CACHE_TOKENS;
      }
    }

    const last = msgs[msgs.length - 1]!;
    const lastBlocks = Array.isArray(last.content) ? (last.content as unknown[]) : [];
    const toolResult = last.role === 'user' ? lastBlocks.find((b) => isObj(b) && b.type === 'tool_result') : undefined;
    const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
    const toolChoice = isObj(body.tool_choice) ? body.tool_choice : undefined;
    let toolName: string | undefined;
    if (tools.length > 0 && toolChoice?.type !== 'none' && last.role === 'user' && !toolResult && fault.type !== 'huge') {
      if (toolChoice?.type === 'tool' && typeof toolChoice.name === 'string') toolName = toolChoice.name;
      else {
        const t0 = tools[0];
        toolName = isObj(t0) && typeof t0.name === 'string' ? t0.name : 'tool';
      }
    }

    let text: string;
    if (fault.type === 'huge') text = 'x'.repeat(Math.max(0, Math.floor(fault.bytes)));
    else if (toolResult && isObj(toolResult)) text = `The tool said: ${anthropicContentText(toolResult.content)}`;
    else {
      const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
      const echo = lastUser ? echoOf(anthropicContentText(lastUser.content)) : undefined;
      text = echo !== undefined ? echo : reply;
    }

    let stopReason = 'end_turn';
    let outputTokens: number;
    if (toolName !== undefined) {
      stopReason = 'tool_use';
      outputTokens = countTokens(toolName + TOOL_CALL_ARGUMENTS);
    } else {
      const t = truncateTokens(text, Math.max(0, body.max_tokens as number));
      text = t.text;
      outputTokens = t.tokens;
      if (t.truncated) stopReason = 'max_tokens';
    }
    const id = `msg_${rid(24)}`;
    const toolId = `toolu_${rid(24)}`;

    if (body.stream !== true) {
      const content =
        toolName !== undefined ? [{ type: 'tool_use', id: toolId, name: toolName, input: JSON.parse(TOOL_CALL_ARGUMENTS) as unknown }] : [{ type: 'text', text }];
      const out: Json = { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null };
      if (!noUsage) {
        out.usage = {
          input_tokens: inputTokens,
          output_tokens: outputTokens,
          cache_creation_input_tokens: cacheCreation,
          cache_read_input_tokens: cacheRead,
        };
      }
      answerJson(ctx, out, '{"id": "msg_');
      return;
    }

    const ev = (type: string, data: Json, terminal = false): Frame => ({
      data: `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`,
      terminal,
    });
    const startMessage: Json = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null };
    if (!noUsage) {
      startMessage.usage = {
        input_tokens: inputTokens,
        output_tokens: 1,
        cache_creation_input_tokens: cacheCreation,
        cache_read_input_tokens: cacheRead,
      };
    }
    const frames: Frame[] = [ev('message_start', { message: startMessage })];
    if (toolName !== undefined) {
      frames.push(ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: toolId, name: toolName, input: {} } }));
      frames.push(ev('ping', {}));
      for (const frag of ['{"', 'city', '":"', 'Paris', '"}']) {
        frames.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: frag } }));
      }
    } else {
      frames.push(ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
      frames.push(ev('ping', {}));
      for (const piece of streamPieces(text)) {
        frames.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
      }
    }
    frames.push(ev('content_block_stop', { index: 0 }));
    const md: Json = { delta: { stop_reason: stopReason, stop_sequence: null } };
    if (!noUsage) md.usage = { output_tokens: outputTokens };
    frames.push(ev('message_delta', md));
    frames.push(ev('message_stop', {}, true));
    await streamFrames(ctx, frames, 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "\n\n');
  }

  function anthropicCountTokens(ctx: Ctx, body: Json): void {
    const msgs = anthropicValidate(ctx, body, false);
    if (!msgs) return;
    answerJson(ctx, { input_tokens: anthropicInputTokens(body, msgs) }, '{"input_tokens": ');
  }

  function anthropicModels(ctx: Ctx, id?: string): void {
    const list = ANTHROPIC_MODELS.map((m) => ({ type: 'model', ...m }));
    if (id !== undefined) {
      const m = list.find((x) => x.id === id);
      if (!m) sendJson(ctx, 404, anthropicError('not_found_error', `model: ${id}`));
      else answerJson(ctx, m, '{"type": "model", "id": "');
      return;
    }
    answerJson(
      ctx,
      { data: list, has_more: false, first_id: list[0]?.id ?? null, last_id: list[list.length - 1]?.id ?? null },
      '{"data": [',
    );
  }

  // ---- control plane ----------------------------------------------------------

  function control(req: http.IncomingMessage, res: http.ServerResponse, pathname: string, raw: string): void {
    let body: unknown;
    try {
      body = raw ? (JSON.parse(raw) as unknown) : undefined;
    } catch {
      body = undefined;
    }
    const send = (status: number, v: unknown) => {
      const t = JSON.stringify(v);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(t)) });
      res.end(t);
    };
    if (req.method === 'GET' && pathname === '/__fake/requests') return send(200, requests);
    if (req.method === 'POST' && pathname === '/__fake/reset') {
      api.reset();
      return send(200, { ok: true });
    }
    if (req.method === 'POST' && pathname === '/__fake/queue') {
      const list = Array.isArray(body) ? body : [body];
      const faults = list.map(parseFault);
      if (faults.some((f) => !f)) return send(400, { error: 'invalid fault' });
      api.queue(...(faults as Fault[]));
      return send(200, { ok: true, queued: faultQueue.length });
    }
    if (req.method === 'POST' && pathname === '/__fake/default') {
      const f = parseFault(body);
      if (!f) return send(400, { error: 'invalid fault' });
      api.setDefault(f);
      return send(200, { ok: true });
    }
    if (req.method === 'POST' && pathname === '/__fake/reply') {
      if (!isObj(body) || typeof body.reply !== 'string') return send(400, { error: 'expected {"reply": string}' });
      api.setReply(body.reply);
      return send(200, { ok: true });
    }
    send(404, { error: 'unknown control endpoint' });
  }

  // ---- dispatch ---------------------------------------------------------------

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.local');
    const pathname = url.pathname.replace(/\/+$/, '') || '/';
    if (pathname.startsWith('/__fake/')) {
      control(req, res, pathname, raw);
      return;
    }

    let json: unknown;
    let jsonOk = false;
    if (raw.length > 0) {
      try {
        json = JSON.parse(raw) as unknown;
        jsonOk = true;
      } catch {
        /* recorded without json */
      }
    }
    const rec: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body: raw };
    if (jsonOk) rec.json = json;
    if (opts.record !== false) requests.push(rec);

    const protocol: Protocol = pathname.startsWith('/v1/messages') || req.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai';

    // pick the fault: header > queue > default
    let fault: Fault | undefined;
    const hdr = req.headers['x-fake-fault'];
    if (typeof hdr === 'string' && hdr) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(hdr) as unknown;
      } catch {
        parsed = undefined;
      }
      fault = parseFault(parsed);
      if (!fault) {
        const ctx0: Ctx = { req, res, fault: { type: 'ok' }, protocol, gone: () => closing || res.destroyed };
        const msg = `x-fake-fault: invalid fault JSON: ${hdr}`;
        sendJson(ctx0, 400, protocol === 'anthropic' ? anthropicError('invalid_request_error', msg) : openaiError(msg));
        return;
      }
    }
    fault ??= opts.faultFor?.(rec) ?? faultQueue.shift() ?? defaultFault;

    let clientGone = false;
    res.on('close', () => {
      if (!res.writableFinished) clientGone = true;
    });
    const ctx: Ctx = { req, res, fault, protocol, gone: () => closing || clientGone || res.destroyed };

    switch (fault.type) {
      case 'refuse':
        req.socket.destroy();
        return;
      case 'hang':
        return; // never answer; close() destroys the socket
      case 'status': {
        let errBody: unknown = fault.body;
        if (errBody === undefined) {
          if (protocol === 'anthropic') {
            const e = anthropicErrorType(fault.status);
            errBody = anthropicError(e.type, e.message);
          } else {
            const e = openaiErrorType(fault.status);
            errBody = openaiError(e.message, null, e.type, e.code);
          }
        }
        sendJson(ctx, fault.status, errBody, fault.headers ?? {});
        return;
      }
      case 'delay':
        await sleep(Math.max(0, fault.ms));
        if (ctx.gone()) return;
        break;
      default:
        break;
    }

    const method = req.method ?? 'GET';
    const notFound = () => {
      const msg = `Invalid URL (${method} ${url.pathname})`;
      sendJson(ctx, 404, protocol === 'anthropic' ? anthropicError('not_found_error', msg) : openaiError(msg));
    };
    const badJson = (): boolean => {
      if (jsonOk && isObj(json)) return false;
      if (protocol === 'anthropic') sendJson(ctx, 400, anthropicError('invalid_request_error', 'There was an error parsing the body of your request; expected a JSON object.'));
      else
        sendJson(
          ctx,
          400,
          openaiError(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
          ),
        );
      return true;
    };

    const modelMatch = /^\/v1\/models\/(.+)$/.exec(pathname);
    if (pathname === '/v1/models' || modelMatch) {
      if (method !== 'GET') return notFound();
      const id = modelMatch ? decodeURIComponent(modelMatch[1]!) : undefined;
      if (req.headers['anthropic-version'] !== undefined) {
        if (anthropicHeadersOk(ctx)) anthropicModels(ctx, id);
      } else if (openaiAuthOk(ctx)) openaiModels(ctx, id);
      return;
    }
    if (pathname === '/v1/chat/completions') {
      if (method !== 'POST') return notFound();
      if (!openaiAuthOk(ctx) || badJson()) return;
      await openaiChat(ctx, json as Json);
      return;
    }
    if (pathname === '/v1/embeddings') {
      if (method !== 'POST') return notFound();
      if (!openaiAuthOk(ctx) || badJson()) return;
      openaiEmbeddings(ctx, json as Json);
      return;
    }
    if (pathname === '/v1/messages') {
      if (method !== 'POST') return notFound();
      if (!anthropicHeadersOk(ctx) || badJson()) return;
      await anthropicMessages(ctx, json as Json);
      return;
    }
    if (pathname === '/v1/messages/count_tokens') {
      if (method !== 'POST') return notFound();
      if (!anthropicHeadersOk(ctx) || badJson()) return;
      anthropicCountTokens(ctx, json as Json);
      return;
    }
    notFound();
  }

  const server = http.createServer((req, res) => {
    if (!req.url?.startsWith('/__fake/')) receivedCount++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => {
      /* client aborted while sending */
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      handle(req, res, raw).catch((err: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const t = JSON.stringify({ error: { message: `fake upstream crashed: ${String(err)}`, type: 'server_error', param: null, code: null } });
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(t)) });
        res.end(t);
      });
    });
  });
  server.on('connection', (socket: Socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => {
    if (!socket.destroyed) socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const api: FakeUpstream = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    received: () => receivedCount,
    queue(...faults: Fault[]) {
      faultQueue.push(...faults);
    },
    setDefault(fault: Fault) {
      defaultFault = fault;
    },
    setReply(text: string) {
      reply = text;
    },
    reset() {
      requests.length = 0;
      receivedCount = 0;
      faultQueue.length = 0;
      defaultFault = { type: 'ok' };
      reply = initialReply;
      seenCacheKeys.clear();
    },
    openConnections() {
      return sockets.size;
    },
    close() {
      closing = true;
      for (const [t, resolve] of timers) {
        clearTimeout(t);
        resolve();
      }
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
        sockets.clear();
      });
    },
  };
  return api;
}
