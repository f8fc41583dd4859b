/**
 * Fake LLM upstream for tests: a plain node:http server that speaks the OpenAI
 * (chat completions, responses, embeddings, models), Anthropic (messages, count_tokens,
 * models) and Gemini (generateContent, streamGenerateContent, countTokens,
 * models under /v1beta) HTTP protocols, records every request byte-exact, and
 * can be told to misbehave per request (see `Fault`).
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
import { fileTaskCall } from './file-task';

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
  /** `delayMs`: how long after its last chunk the connection breaks (default MID_STREAM_CUT_MS) */
  | { type: 'cut'; afterChunks: number; delayMs?: number }
  | { type: 'no-done' }
  | { type: 'stall'; afterChunks: number }
  | { type: 'huge'; bytes: number }
  | { type: 'no-usage' }
  /** a stream (200, text/event-stream) of `bytes` bytes without a newline: one endless SSE line */
  | { type: 'flood'; bytes: number }
  /** a stream that never ends: its first frame, then its first content frame again and again, until the client leaves */
  | { type: 'endless' }
  /**
   * a recorded reply sent verbatim whatever was asked (200): JSON, or with `stream` an SSE text whose
   * events (blank-line separated) are written one by one; `cutAfterEvents` breaks the connection after that many
   * (`cutDelayMs` after the last: long enough for the gateway to have relayed them on a loaded machine)
   */
  | { type: 'replay'; body: string; stream?: boolean; cutAfterEvents?: number; cutDelayMs?: number };

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
  /** a request with tools and a file task in its text gets the call that creates the file (tests/support/file-task.ts) */
  fileTask?: boolean;
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
  /** Bytes written by the last 'flood' or 'endless' stream (so far): how soon the client dropped it. */
  faultBytes(): number;
  /** The videos created (POST /v1/videos that made one; a creation answered by its idempotency key makes none). */
  videosCreated(): { id: string; prompt: string }[];
  /** closes all sockets too */
  close(): Promise<void>;
}

export const DEFAULT_REPLY = 'Hello from the fake upstream.';
/** How long the fake takes to generate a video (a prompt's `[ms=N]` overrides it). */
export const VIDEO_MS = 3000;

interface FakeVideo {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  created: number;
  ms: number;
  fail: boolean;
}

/** The bytes of a fake video's content: 200 KiB, an MP4 box header then a pattern (deterministic per id). */
export function fakeVideoBytes(id: string): Buffer {
  const out = Buffer.alloc(200 * 1024);
  out.write('\x00\x00\x00\x18ftypmp42', 0, 'latin1');
  const seed = createHash('sha256').update(id).digest();
  for (let i = 12; i < out.length; i++) out[i] = seed[i % seed.length]! ^ (i & 0xff);
  return out;
}
export const DEFAULT_EMBEDDING_DIMS = 1536;
/** arguments the fake always puts in a tool call */
export const TOOL_CALL_ARGUMENTS = '{"city":"Paris"}';
/** cache_creation_input_tokens / cache_read_input_tokens reported by /v1/messages when cache_control is used */
export const CACHE_TOKENS = 100;

export const OPENAI_MODELS = ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'];
/** Gemini models listed by GET /v1beta/models (any model name is served). */
export const GEMINI_MODELS = ['gemini-2.5-flash', 'gemini-2.5-pro'];
/** The thought text a Gemini reply carries when the request asks thinkingConfig.includeThoughts. */
export const GEMINI_THOUGHT = 'Let me think about what the user is asking for.';
/** x-goog-api-key values starting with this are refused as invalid keys (400 API_KEY_INVALID, as Google does). */
export const GEMINI_INVALID_KEY_PREFIX = 'invalid';
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

/** A tool call's arguments as streamed: the classic five fragments for the default, else about five pieces. */
function argumentFragments(args: string): string[] {
  if (args === TOOL_CALL_ARGUMENTS) return ['{"', 'city', '":"', 'Paris', '"}'];
  const size = Math.max(1, Math.ceil(args.length / 5));
  const out: string[] = [];
  for (let i = 0; i < args.length; i += size) out.push(args.slice(i, i + size));
  return out;
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
    const toks = enc()
      .encode(seg.text)
      .slice(0, max - used);
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
type Protocol = 'openai' | 'anthropic' | 'gemini';

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
    return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : isObj(p) && typeof p.refusal === 'string' ? p.refusal : '')).join('');
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
      return status >= 500 ? { type: 'api_error', message: 'Internal server error' } : { type: 'invalid_request_error', message: 'Invalid request.' };
  }
}

function openaiError(message: string, param: string | null = null, type = 'invalid_request_error', code: string | null = null) {
  return { error: { message, type, param, code } };
}

function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

/** Google's canonical status names (google.rpc.Code) for the HTTP statuses the API answers with. */
function geminiStatusName(status: number): string {
  switch (status) {
    case 400:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

function geminiErrorMessage(status: number): string {
  switch (status) {
    case 400:
      return 'Request contains an invalid argument.';
    case 429:
      return 'Resource has been exhausted (e.g. check quota).';
    case 500:
      return 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting';
    case 503:
      return 'The model is overloaded. Please try again later.';
    case 504:
      return 'Deadline expired before operation could complete.';
    default:
      return http.STATUS_CODES[status] ?? 'Error';
  }
}

function geminiError(code: number, message: string, extra: Json = {}) {
  return { error: { code, message, status: geminiStatusName(code), ...extra } };
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
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
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
  const known = ['ok', 'status', 'refuse', 'hang', 'delay', 'malformed', 'cut', 'no-done', 'stall', 'huge', 'no-usage', 'flood', 'endless', 'replay'];
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
  const videos = new Map<string, FakeVideo>();
  /** Idempotency-Key of a creation -> the video it made (a creation sent again answers the same video, as OpenAI's API does). */
  const videoByKey = new Map<string, FakeVideo>();
  let receivedCount = 0;
  const faultQueue: Fault[] = [];
  let defaultFault: Fault = { type: 'ok' };
  let reply = initialReply;
  const seenCacheKeys = new Set<string>();

  const sockets = new Set<Socket>();
  const timers = new Map<NodeJS.Timeout, () => void>();
  let closing = false;

  /**
   * In fileTask mode, the tool call a request that declares tools gets: the file-creating call of
   * tests/support/file-task.ts (none when the request holds no file task: a text reply). `toolName`
   * is the call the fake would make otherwise (undefined: none, e.g. after a tool result).
   */
  function fileTaskOverride(toolName: string | undefined, names: string[], body: Json): { toolName: string | undefined; toolArgs: string } {
    if (!opts.fileTask || toolName === undefined) return { toolName, toolArgs: TOOL_CALL_ARGUMENTS };
    const call = fileTaskCall(names, JSON.stringify(body));
    return { toolName: call?.name, toolArgs: call?.arguments ?? TOOL_CALL_ARGUMENTS };
  }

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
    if (ctx.protocol === 'gemini') return {};
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
      const [before, after] = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'string' && v.length === size && size > 0 ? mark : v)).split(
        JSON.stringify(mark),
      );
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
  async function streamFrames(ctx: Ctx, planned: Frame[], malformedFrame: string, contentType = 'text/event-stream'): Promise<void> {
    if (ctx.gone()) return;
    const f = ctx.fault;
    let frames = planned;
    if (f.type === 'no-done') frames = frames.filter((fr) => !fr.terminal);
    if (f.type === 'malformed') frames = [frames[0]!, { data: malformedFrame }, ...frames.slice(1)];
    let limit = frames.length;
    if (f.type === 'cut' || f.type === 'stall') limit = Math.max(0, Math.min(frames.length, Math.floor(f.afterChunks)));

    const res = ctx.res;
    res.writeHead(200, {
      'content-type': contentType,
      'cache-control': 'no-cache',
      ...baseHeaders(ctx),
    });
    res.flushHeaders();
    if (f.type === 'flood' || f.type === 'endless') return hostileStream(ctx, f, frames);

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
      if (limit > 0) await sleep(f.delayMs ?? MID_STREAM_CUT_MS);
      if (ctx.gone()) return;
      destroyAfterFlush(res);
      return;
    }
    if (f.type === 'stall') return; // keep the connection open until the client gives up or close()
    res.end();
  }

  let faultBytes = 0;

  /** 'flood' and 'endless': written with backpressure (the fake's memory stays flat) until done or the client leaves. */
  async function hostileStream(ctx: Ctx, f: Fault & { type: 'flood' | 'endless' }, frames: Frame[]): Promise<void> {
    const res = ctx.res;
    faultBytes = 0;
    const piece = f.type === 'flood' ? Buffer.alloc(64 * 1024, 'x') : Buffer.from(frames[Math.min(1, frames.length - 1)]!.data);
    let left = f.type === 'flood' ? Math.max(0, Math.floor(f.bytes)) : Infinity;
    if (f.type === 'flood') res.write('data: ');
    else res.write(frames[0]!.data);
    while (left > 0 && !ctx.gone()) {
      const chunk = left < piece.length ? piece.subarray(0, left) : piece;
      left -= chunk.length;
      faultBytes += chunk.length;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    if (!ctx.gone()) res.end();
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

    // The turn to answer: system messages after it (Claude Code appends one) do not change whose turn it is.
    const last = [...msgs].reverse().find((m) => m.role !== 'system' && m.role !== 'developer') ?? msgs[msgs.length - 1]!;
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
    const names = tools.map((t) => (isObj(t) && isObj(t.function) ? String(t.function.name) : ''));
    const { toolName: callName, toolArgs } = fileTaskOverride(toolName, names, body);
    toolName = callName;

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
      completionTokens = countTokens(toolName + toolArgs);
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
              tool_calls: [{ id: callId, type: 'function', function: { name: toolName, arguments: toolArgs } }],
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
      for (const frag of argumentFragments(toolArgs)) {
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
        : (dims[model] ?? DEFAULT_EMBEDDING_DIMS);
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
    const names = tools.map((t) => (isObj(t) ? String(t.name) : ''));
    const { toolName: callName, toolArgs } = fileTaskOverride(toolName, names, body);
    toolName = callName;

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
      outputTokens = countTokens(toolName + toolArgs);
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
        toolName !== undefined ? [{ type: 'tool_use', id: toolId, name: toolName, input: JSON.parse(toolArgs) as unknown }] : [{ type: 'text', text }];
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
      for (const frag of argumentFragments(toolArgs)) {
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
    await streamFrames(
      ctx,
      frames,
      'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "\n\n',
    );
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
    answerJson(ctx, { data: list, has_more: false, first_id: list[0]?.id ?? null, last_id: list[list.length - 1]?.id ?? null }, '{"data": [');
  }

  // ---- Gemini -----------------------------------------------------------------

  /**
   * Google's key check: `x-goog-api-key` (or `?key=`). No credential at all is a 403 for an
   * unregistered caller; an OAuth bearer token (which this fake does not issue) a 401; a key that
   * is not valid a 400 INVALID_ARGUMENT with reason API_KEY_INVALID, as Google answers it.
   */
  function geminiAuthOk(ctx: Ctx, url: URL): boolean {
    const header = ctx.req.headers['x-goog-api-key'];
    const key = typeof header === 'string' && header ? header : (url.searchParams.get('key') ?? '');
    if (key) {
      if (!key.startsWith(GEMINI_INVALID_KEY_PREFIX)) return true;
      sendJson(
        ctx,
        400,
        geminiError(400, 'API key not valid. Please pass a valid API key.', {
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'API_KEY_INVALID',
              domain: 'googleapis.com',
              metadata: { service: 'generativelanguage.googleapis.com' },
            },
            { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
          ],
        }),
      );
      return false;
    }
    const auth = ctx.req.headers.authorization;
    if (typeof auth === 'string' && /^Bearer\s+\S+/i.test(auth)) {
      sendJson(
        ctx,
        401,
        geminiError(
          401,
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
          { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_TYPE_UNSUPPORTED', domain: 'googleapis.com' }] },
        ),
      );
      return false;
    }
    sendJson(
      ctx,
      403,
      geminiError(
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      ),
    );
    return false;
  }

  /** Proto JSON accepts lowerCamel and snake_case names alike. */
  const camel = (k: string) => k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

  const GEMINI_FIELDS: Record<string, Set<string>> = {
    request: new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'safetySettings', 'generationConfig', 'cachedContent', 'labels']),
    generationConfig: new Set([
      'stopSequences',
      'responseMimeType',
      'responseSchema',
      'responseJsonSchema',
      'responseModalities',
      'candidateCount',
      'maxOutputTokens',
      'temperature',
      'topP',
      'topK',
      'seed',
      'presencePenalty',
      'frequencyPenalty',
      'responseLogprobs',
      'logprobs',
      'enableEnhancedCivicAnswers',
      'speechConfig',
      'thinkingConfig',
      'mediaResolution',
      'imageConfig',
    ]),
    thinkingConfig: new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']),
    content: new Set(['role', 'parts']),
    part: new Set([
      'text',
      'inlineData',
      'fileData',
      'functionCall',
      'functionResponse',
      'thought',
      'thoughtSignature',
      'executableCode',
      'codeExecutionResult',
      'videoMetadata',
      'partMetadata',
      'mediaResolution',
    ]),
    tool: new Set(['functionDeclarations', 'googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'fileSearch', 'computerUse', 'googleMaps']),
    functionDeclaration: new Set(['name', 'description', 'behavior', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema']),
  };

  /** Google's answer to a member its schema lacks: `Invalid JSON payload received. Unknown name "x" at 'path': Cannot find field.` */
  function geminiUnknownField(obj: Json, kind: string, at: string): string | undefined {
    for (const k of Object.keys(obj)) {
      if (!GEMINI_FIELDS[kind]!.has(camel(k))) {
        return `Invalid JSON payload received. Unknown name "${k}"${at ? ` at '${at}'` : ''}: Cannot find field.`;
      }
    }
    return undefined;
  }

  const field = (o: Json, name: string): unknown => o[name] ?? o[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
  const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

  /** Validates a generateContent body as Google does; the error message, or undefined when it is valid. */
  function geminiInvalid(body: Json, model: string): string | undefined {
    const unknown = geminiUnknownField(body, 'request', '');
    if (unknown) return unknown;
    const gen = field(body, 'generationConfig');
    if (gen !== undefined) {
      if (!isObj(gen)) return 'Invalid JSON payload received. Unknown name "generationConfig": Proto field is not repeating, cannot start list.';
      const u = geminiUnknownField(gen, 'generationConfig', 'generation_config');
      if (u) return u;
      const tc = field(gen, 'thinkingConfig');
      if (isObj(tc)) {
        const u2 = geminiUnknownField(tc, 'thinkingConfig', 'generation_config.thinking_config');
        if (u2) return u2;
      }
    }
    const tools = field(body, 'tools');
    if (tools !== undefined) {
      if (!Array.isArray(tools)) return `Invalid JSON payload received. Unknown name "tools": Proto field is repeating, cannot start object.`;
      for (let i = 0; i < tools.length; i++) {
        const t: unknown = tools[i];
        if (!isObj(t)) return `Invalid value at 'tools[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), not an object`;
        const u = geminiUnknownField(t, 'tool', `tools[${i}]`);
        if (u) return u;
        const decls = field(t, 'functionDeclarations');
        if (Array.isArray(decls)) {
          for (let j = 0; j < decls.length; j++) {
            const d: unknown = decls[j];
            if (!isObj(d)) return `Invalid value at 'tools[${i}].function_declarations[${j}]', not an object`;
            const u2 = geminiUnknownField(d, 'functionDeclaration', `tools[${i}].function_declarations[${j}]`);
            if (u2) return u2;
            if (typeof d.name !== 'string' || !d.name) return `* GenerateContentRequest.tools[${i}].function_declarations[${j}].name: Name cannot be empty.\n`;
            if (field(d, 'parameters') !== undefined && field(d, 'parametersJsonSchema') !== undefined) {
              return `* GenerateContentRequest.tools[${i}].function_declarations[${j}]: parameters and parameters_json_schema are mutually exclusive.\n`;
            }
          }
        }
      }
    }
    const contents = body.contents;
    if (contents === undefined || contents === null || (Array.isArray(contents) && contents.length === 0)) {
      return '* GenerateContentRequest.contents: contents is not specified\n';
    }
    if (!Array.isArray(contents)) return 'Invalid JSON payload received. Unknown name "contents": Proto field is repeating, cannot start object.';
    let pendingCalls = 0;
    for (let i = 0; i < contents.length; i++) {
      const c: unknown = contents[i];
      if (!isObj(c)) return `Invalid value at 'contents[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), not an object`;
      const u = geminiUnknownField(c, 'content', `contents[${i}]`);
      if (u) return u;
      const role = c.role ?? 'user';
      if (role !== 'user' && role !== 'model') return 'Please use a valid role: user, model.';
      if (!Array.isArray(c.parts) || c.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`;
      let calls = 0;
      let responses = 0;
      for (let j = 0; j < c.parts.length; j++) {
        const p: unknown = c.parts[j];
        if (!isObj(p)) return `Invalid value at 'contents[${i}].parts[${j}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), not an object`;
        const u2 = geminiUnknownField(p, 'part', `contents[${i}].parts[${j}]`);
        if (u2) return u2;
        const data = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'].filter(
          (k) => field(p, k) !== undefined,
        );
        if (data.length === 0) return `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field\n`;
        if (data.length > 1) return `Invalid value at 'contents[${i}].parts[${j}]': oneof field 'data' is already set. Cannot set '${data[1]}'`;
        const sig = field(p, 'thoughtSignature');
        if (sig !== undefined && (typeof sig !== 'string' || !BASE64.test(sig))) {
          return `Invalid value at 'contents[${i}].parts[${j}].thought_signature' (TYPE_BYTES), Base64 decoding failed for "${String(sig)}"`;
        }
        const fc = field(p, 'functionCall');
        if (fc !== undefined) {
          if (role !== 'model') return `Please ensure that function call turns come immediately after a user turn or after a function response turn.`;
          // Gemini 3 refuses a replayed function call (the first of a model turn) without its signature.
          if (calls === 0 && /^gemini-3/.test(model) && sig === undefined) {
            return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${isObj(fc) ? String(fc.name) : ''}\` , position ${j + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
          }
          calls++;
        }
        if (field(p, 'functionResponse') !== undefined) responses++;
      }
      if (responses > 0) {
        if (pendingCalls === 0) return 'Please ensure that function response turn comes immediately after a function call turn.';
        if (responses !== pendingCalls) {
          return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
        }
      }
      pendingCalls = calls;
    }
    return undefined;
  }

  function geminiPartText(p: Json): string {
    if (typeof p.text === 'string') return p.text;
    const fc = field(p, 'functionCall');
    if (isObj(fc)) return String(fc.name ?? '') + JSON.stringify(fc.args ?? {});
    const fr = field(p, 'functionResponse');
    if (isObj(fr)) return String(fr.name ?? '') + JSON.stringify(fr.response ?? {});
    return '';
  }

  function geminiContentText(c: unknown): string {
    if (!isObj(c) || !Array.isArray(c.parts)) return '';
    return c.parts.map((p) => (isObj(p) ? geminiPartText(p) : '')).join('');
  }

  /** Prompt tokens as this fake counts them: each content's text + 3, the system instruction likewise. */
  function geminiPromptTokens(body: Json): number {
    const contents = body.contents as Json[];
    let n = contents.reduce((acc, c) => acc + countTokens(geminiContentText(c)) + 3, 0);
    const sys = field(body, 'systemInstruction');
    if (sys !== undefined) n += countTokens(geminiContentText(sys)) + 3;
    return n;
  }

  /** A thought signature as Gemini returns it: opaque base64. */
  const geminiSignature = () => randomBytes(48).toString('base64');

  async function geminiGenerate(ctx: Ctx, body: Json, model: string, stream: 'no' | 'sse' | 'array'): Promise<void> {
    const invalid = geminiInvalid(body, model);
    if (invalid) {
      sendJson(ctx, 400, geminiError(400, invalid));
      return;
    }
    const fault = ctx.fault;
    const noUsage = fault.type === 'no-usage';
    const contents = body.contents as Json[];
    const gen = isObj(field(body, 'generationConfig')) ? (field(body, 'generationConfig') as Json) : {};
    const thinkingConfig = isObj(field(gen, 'thinkingConfig')) ? (field(gen, 'thinkingConfig') as Json) : undefined;
    const thinking = thinkingConfig !== undefined && field(thinkingConfig, 'thinkingBudget') !== 0;
    const includeThoughts = thinking && field(thinkingConfig!, 'includeThoughts') === true;
    const thought = thinking ? GEMINI_THOUGHT : '';
    const thoughtsTokens = countTokens(thought);

    // A request that names a cachedContent reuses it: its tokens are part of the prompt, and counted as cached.
    const cachedContent = field(body, 'cachedContent');
    const cached = typeof cachedContent === 'string' && cachedContent !== '' ? CACHE_TOKENS : 0;
    const promptTokens = geminiPromptTokens(body) + cached;

    const last = contents[contents.length - 1]!;
    const lastParts = Array.isArray(last.parts) ? (last.parts as Json[]) : [];
    const toolResponse = lastParts.find((p) => isObj(p) && field(p, 'functionResponse') !== undefined);
    const decls: Json[] = [];
    for (const t of Array.isArray(body.tools) ? (body.tools as unknown[]) : []) {
      const d = isObj(t) ? field(t, 'functionDeclarations') : undefined;
      if (Array.isArray(d)) decls.push(...d.filter(isObj));
    }
    const toolConfig = field(body, 'toolConfig');
    const fcc = isObj(toolConfig) && isObj(field(toolConfig, 'functionCallingConfig')) ? (field(toolConfig, 'functionCallingConfig') as Json) : {};
    let toolName: string | undefined;
    if (decls.length > 0 && fcc.mode !== 'NONE' && (last.role ?? 'user') === 'user' && !toolResponse && fault.type !== 'huge') {
      const allowed = field(fcc, 'allowedFunctionNames');
      toolName = Array.isArray(allowed) && typeof allowed[0] === 'string' ? allowed[0] : String(decls[0]!.name);
    }
    const { toolName: callName, toolArgs } = fileTaskOverride(
      toolName,
      decls.map((d) => String(d.name)),
      body,
    );
    toolName = callName;

    let text: string;
    if (fault.type === 'huge') text = 'x'.repeat(Math.max(0, Math.floor(fault.bytes)));
    else if (toolResponse) text = `The tool said: ${JSON.stringify((field(toolResponse, 'functionResponse') as Json).response ?? {})}`;
    else {
      const lastUser = [...contents].reverse().find((c) => (c.role ?? 'user') === 'user');
      const echo = lastUser ? echoOf(geminiContentText(lastUser)) : undefined;
      if (echo !== undefined) text = echo;
      else if (field(gen, 'responseMimeType') === 'application/json') text = '{"answer":"ok"}';
      else text = reply;
    }

    const maxTokens = field(gen, 'maxOutputTokens');
    let finishReason = 'STOP';
    let candidatesTokens: number;
    if (toolName !== undefined) candidatesTokens = countTokens(toolName + toolArgs);
    else if (typeof maxTokens === 'number' && maxTokens >= 0) {
      const t = truncateTokens(text, maxTokens);
      text = t.text;
      candidatesTokens = t.tokens;
      if (t.truncated) finishReason = 'MAX_TOKENS';
    } else candidatesTokens = fault.type === 'huge' ? hugeTokens(text.length) : countTokens(text);

    const usage = (candidates: number | undefined): Json => {
      const u: Json = { promptTokenCount: promptTokens };
      if (candidates !== undefined) u.candidatesTokenCount = candidates;
      u.totalTokenCount = promptTokens + (candidates ?? 0) + (thinking ? thoughtsTokens : 0);
      if (cached) u.cachedContentTokenCount = cached;
      u.promptTokensDetails = [{ modality: 'TEXT', tokenCount: promptTokens }];
      if (cached) u.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: cached }];
      if (thinking) u.thoughtsTokenCount = thoughtsTokens;
      return u;
    };
    const responseId = rid(22);
    // Gemini 3, and thinking 2.5 models, sign the first function call of a reply.
    const signCall = thinking || /^gemini-3/.test(model);
    const callPart = (): Json => {
      const part: Json = { functionCall: { name: toolName, args: JSON.parse(toolArgs) as unknown } };
      if (signCall) part.thoughtSignature = geminiSignature();
      return part;
    };
    const thoughtPart = (): Json => ({ text: thought, thought: true });
    const event = (parts: Json[], finish: string | undefined, u: Json | undefined): Json => {
      const candidate: Json = { content: { parts, role: 'model' } };
      if (finish) candidate.finishReason = finish;
      candidate.index = 0;
      const out: Json = { candidates: [candidate] };
      if (u && !noUsage) out.usageMetadata = u;
      out.modelVersion = model;
      out.responseId = responseId;
      return out;
    };

    if (stream === 'no') {
      const parts: Json[] = [];
      if (includeThoughts) parts.push(thoughtPart());
      if (toolName !== undefined) parts.push(callPart());
      else parts.push({ text });
      answerJson(ctx, event(parts, finishReason, usage(candidatesTokens)), '{"candidates": [{"content": {"parts": [{"text": "');
      return;
    }

    // Each event is a whole GenerateContentResponse holding only its new parts; usageMetadata
    // rides on every event, cumulative (the last one counts).
    const events: Json[] = [];
    if (includeThoughts) events.push(event([thoughtPart()], undefined, usage(undefined)));
    if (toolName !== undefined) events.push(event([callPart()], finishReason, usage(candidatesTokens)));
    else {
      // The running count is the pieces' counts summed (linear, where recounting the text so far
      // would be quadratic on a 'huge' reply), kept at most the exact total the last event gives.
      const pieces = streamPieces(text);
      let running = 0;
      pieces.forEach((piece, i) => {
        running += fault.type === 'huge' ? hugeTokens(piece.length) : countTokens(piece);
        const lastPiece = i === pieces.length - 1;
        events.push(event([{ text: piece }], lastPiece ? finishReason : undefined, usage(lastPiece ? candidatesTokens : Math.min(running, candidatesTokens))));
      });
      if (pieces.length === 0) events.push(event([{ text: '' }], finishReason, usage(candidatesTokens)));
    }
    // The event with the finishReason ends the reply: 'no-done' leaves it out.
    if (stream === 'sse') {
      const frames: Frame[] = events.map((e, i) => ({ data: `data: ${JSON.stringify(e)}\r\n\r\n`, terminal: i === events.length - 1 }));
      await streamFrames(ctx, frames, 'data: {"candidates": [{"content": {"parts": [{"text": "\r\n\r\n');
      return;
    }
    // Without alt=sse Google streams one JSON array, an element at a time.
    const frames: Frame[] = events.map((e, i) => ({ data: `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(e)}`, terminal: i === events.length - 1 }));
    frames.push({ data: ']', terminal: true });
    await streamFrames(ctx, frames, ',\r\n{"candidates": [{"content": ', 'application/json; charset=UTF-8');
  }

  function geminiCountTokens(ctx: Ctx, body: Json, model: string): void {
    const request = isObj(field(body, 'generateContentRequest')) ? (field(body, 'generateContentRequest') as Json) : body;
    const unknownTop = Object.keys(body).find((k) => !['contents', 'generateContentRequest'].includes(camel(k)));
    if (unknownTop) return sendJson(ctx, 400, geminiError(400, `Invalid JSON payload received. Unknown name "${unknownTop}": Cannot find field.`));
    const invalid = geminiInvalid({ ...request, contents: request.contents ?? body.contents }, model);
    if (invalid) return sendJson(ctx, 400, geminiError(400, invalid));
    const total = geminiPromptTokens({ ...request, contents: request.contents ?? body.contents });
    answerJson(ctx, { totalTokens: total, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] }, '{"totalTokens": ');
  }

  function geminiModel(name: string): Json {
    return {
      name: `models/${name}`,
      version: '001',
      displayName: name.replace(/^gemini-/, 'Gemini ').replace(/-/g, ' '),
      inputTokenLimit: 1048576,
      outputTokenLimit: 65536,
      supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
      temperature: 1,
      topP: 0.95,
      topK: 64,
      maxTemperature: 2,
      thinking: true,
    };
  }

  function geminiModels(ctx: Ctx, id?: string): void {
    if (id !== undefined) {
      if (!GEMINI_MODELS.includes(id))
        sendJson(
          ctx,
          404,
          geminiError(
            404,
            `models/${id} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
          ),
        );
      else answerJson(ctx, geminiModel(id), '{"name": "models/');
      return;
    }
    answerJson(ctx, { models: GEMINI_MODELS.map(geminiModel) }, '{"models": [');
  }

  // ---- OpenAI videos (POST /v1/videos, GET /v1/videos/{id}, GET /v1/videos/{id}/content) -----

  /**
   * A video takes VIDEO_MS (or the `[ms=N]` of its prompt) to generate: queued for its first tenth,
   * then in_progress with a rising progress, then completed; a prompt with FAIL_LATER fails once it
   * would have completed, one with FAIL_NOW is refused at creation (400). A creation with an
   * Idempotency-Key seen before answers the video that key made; `[create_ms=N]` in the prompt
   * answers a creation N ms after the video is made (a caller killed in between never sees its id).
   */
  function openaiVideos(ctx: Ctx, method: string, pathname: string, body: Json | undefined): void {
    if (pathname === '/v1/videos' && method === 'POST') {
      if (!body || typeof body.prompt !== 'string' || typeof body.model !== 'string') {
        sendJson(ctx, 400, openaiError("Missing required parameter: 'prompt'.", 'prompt'));
        return;
      }
      const idemKey = ctx.req.headers['idempotency-key'];
      const again = typeof idemKey === 'string' ? videoByKey.get(idemKey) : undefined;
      if (again) {
        sendJson(ctx, 200, videoJson(again));
        return;
      }
      if (body.prompt.includes('FAIL_NOW')) {
        sendJson(ctx, 400, openaiError('Your request was rejected by the safety system (FAIL_NOW).', 'prompt', 'invalid_request_error', 'moderation_blocked'));
        return;
      }
      const ms = Number(/\[ms=(\d+)\]/.exec(body.prompt)?.[1] ?? VIDEO_MS);
      const v: FakeVideo = {
        id: `video_${rid(32)}`,
        model: body.model,
        prompt: body.prompt,
        seconds: String(body.seconds ?? '4'),
        size: String(body.size ?? '720x1280'),
        created: Date.now(),
        ms,
        fail: body.prompt.includes('FAIL_LATER'),
      };
      videos.set(v.id, v);
      if (typeof idemKey === 'string') videoByKey.set(idemKey, v);
      const createMs = Number(/\[create_ms=(\d+)\]/.exec(body.prompt)?.[1] ?? 0);
      if (createMs > 0) setTimeout(() => sendJson(ctx, 200, videoJson(v)), createMs);
      else sendJson(ctx, 200, videoJson(v));
      return;
    }
    const m = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(pathname);
    const v = m ? videos.get(m[1]!) : undefined;
    if (!m || method !== 'GET') {
      sendJson(ctx, 404, openaiError(`Invalid URL (${method} ${pathname})`));
      return;
    }
    if (!v) {
      sendJson(ctx, 404, openaiError(`Video ${m[1]} not found.`, 'id', 'invalid_request_error', 'not_found'));
      return;
    }
    if (!m[2]) {
      sendJson(ctx, 200, videoJson(v));
      return;
    }
    if (videoJson(v).status !== 'completed') {
      sendJson(ctx, 400, openaiError('Video is not ready yet.', null, 'invalid_request_error', 'video_not_ready'));
      return;
    }
    const bytes = fakeVideoBytes(v.id);
    ctx.res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
    ctx.res.end(bytes);
  }

  function videoJson(v: FakeVideo) {
    const elapsed = Date.now() - v.created;
    const done = elapsed >= v.ms;
    const status = done ? (v.fail ? 'failed' : 'completed') : elapsed < v.ms / 10 ? 'queued' : 'in_progress';
    return {
      id: v.id,
      object: 'video',
      model: v.model,
      status,
      progress: done ? 100 : Math.floor((elapsed / v.ms) * 100),
      created_at: Math.floor(v.created / 1000),
      completed_at: done && !v.fail ? Math.floor((v.created + v.ms) / 1000) : null,
      expires_at: null,
      prompt: v.prompt,
      seconds: v.seconds,
      size: v.size,
      remixed_from_video_id: null,
      error: done && v.fail ? { code: 'video_generation_failed', message: 'The fake upstream failed this video on demand (FAIL_LATER).' } : null,
    };
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

  // ---- OpenAI Responses compaction (POST /v1/responses/compact) -----------------

  /** OpenAI's compaction: the user messages kept, the rest as one opaque `compaction` item. */
  function openaiResponsesCompact(ctx: Ctx, body: Json): void {
    const items = Array.isArray(body.input) ? (body.input as unknown[]).filter(isObj) : [];
    const inputTokens = countTokens(responsesInputText(items)) + 3;
    sendJson(ctx, 200, {
      id: `resp_${rid(48)}`,
      object: 'response.compaction',
      created_at: nowSec(),
      output: [...items.filter((i) => i.role === 'user'), { type: 'compaction', id: `cmp_${rid(24)}`, encrypted_content: `gAAAA${rid(40)}` }],
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 40,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + 40,
      },
    });
  }

  // ---- OpenAI Responses (POST /v1/responses) ---------------------------------

  /** The text of a Responses `input` (a string or items): what its prompt tokens count. */
  function responsesInputText(input: unknown): string {
    if (typeof input === 'string') return input;
    if (!Array.isArray(input)) return '';
    let t = '';
    for (const item of input) {
      if (!isObj(item)) continue;
      t += openaiContentText(item.content);
      if (typeof item.arguments === 'string') t += item.arguments;
      if (typeof item.output === 'string') t += item.output;
    }
    return t;
  }

  /**
   * As OpenAI's Responses API answers: a Response object, or (stream: true) typed events
   * (`event:` lines, `sequence_number` from 0) ending with `response.completed` carrying the usage.
   * A built-in web_search tool yields a `web_search_call` item before the message; a function tool
   * (on a user turn) a `function_call` item with TOOL_CALL_ARGUMENTS.
   */
  async function openaiResponses(ctx: Ctx, body: Json): Promise<void> {
    if (typeof body.model !== 'string' || !body.model) {
      sendJson(ctx, 400, openaiError("Missing required parameter: 'model'.", 'model'));
      return;
    }
    if (body.input === undefined || body.input === null) {
      sendJson(ctx, 400, openaiError("Missing required parameter: 'input'.", 'input'));
      return;
    }
    const tools = Array.isArray(body.tools) ? (body.tools as unknown[]).filter(isObj) : [];
    const webSearch = tools.some((t) => typeof t.type === 'string' && t.type.startsWith('web_search'));
    const fnTools = tools.filter((t) => (t.type === 'function' || t.type === 'custom') && typeof t.name === 'string');
    const fnTool = fnTools.find((t) => t.type === 'function');
    const items = Array.isArray(body.input) ? (body.input as unknown[]).filter(isObj) : [];
    const lastIsOutput = items.length > 0 && items[items.length - 1]!.type === 'function_call_output';
    const inputText = (typeof body.instructions === 'string' ? body.instructions : '') + responsesInputText(body.input);
    const inputTokens = countTokens(inputText) + 3;
    const id = `resp_${rid(48)}`;
    const created = nowSec();
    const lastText = typeof body.input === 'string' ? body.input : responsesInputText(items.filter((i) => i.role === 'user').slice(-1));
    const text = lastIsOutput ? `The tool said: ${String(items[items.length - 1]!.output ?? '')}` : (echoOf(lastText) ?? reply);
    const output: Json[] = [];
    if (webSearch) output.push({ id: `ws_${rid(48)}`, type: 'web_search_call', status: 'completed', action: { type: 'search', query: lastText } });
    const { toolName, toolArgs } = fileTaskOverride(
      fnTool && !lastIsOutput && body.tool_choice !== 'none' ? String(fnTool.name) : undefined,
      fnTools.map((t) => String(t.name)),
      body,
    );
    if (toolName !== undefined) {
      output.push({
        id: `fc_${rid(48)}`,
        type: 'function_call',
        status: 'completed',
        arguments: toolArgs,
        call_id: `call_${rid(24)}`,
        name: toolName,
      });
    } else {
      const annotations = webSearch ? [{ type: 'url_citation', start_index: 0, end_index: text.length, url: 'https://example.com/', title: 'Example' }] : [];
      output.push({
        id: `msg_${rid(48)}`,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations, logprobs: [] }],
      });
    }
    const outputTokens = countTokens(output.map((o) => (o.type === 'function_call' ? String(o.name) + toolArgs : o.type === 'message' ? text : '')).join(''));
    const usage = {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    };
    const response = (status: string, out: Json[], u: Json | null): Json => ({
      id,
      object: 'response',
      created_at: created,
      status,
      background: false,
      error: null,
      incomplete_details: null,
      instructions: typeof body.instructions === 'string' ? body.instructions : null,
      max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
      model: body.model,
      output: out,
      parallel_tool_calls: body.parallel_tool_calls !== false,
      previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
      reasoning: { effort: null, summary: null },
      store: body.store !== false,
      temperature: typeof body.temperature === 'number' ? body.temperature : 1,
      text: { format: { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      top_p: typeof body.top_p === 'number' ? body.top_p : 1,
      truncation: 'disabled',
      usage: u,
      user: null,
      metadata: isObj(body.metadata) ? body.metadata : {},
    });
    if (body.stream !== true) {
      answerJson(ctx, response('completed', output, ctx.fault.type === 'no-usage' ? null : usage), '{"id": "resp_');
      return;
    }
    let seq = 0;
    const frames: Frame[] = [];
    const ev = (type: string, payload: Json): void => {
      frames.push({ data: `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...payload })}\n\n` });
    };
    ev('response.created', { response: response('in_progress', [], null) });
    ev('response.in_progress', { response: response('in_progress', [], null) });
    output.forEach((item, i) => {
      if (item.type === 'web_search_call') {
        ev('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress' } });
        ev('response.web_search_call.in_progress', { output_index: i, item_id: item.id });
        ev('response.web_search_call.searching', { output_index: i, item_id: item.id });
        ev('response.web_search_call.completed', { output_index: i, item_id: item.id });
        ev('response.output_item.done', { output_index: i, item });
      } else if (item.type === 'function_call') {
        ev('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const frag of argumentFragments(toolArgs)) ev('response.function_call_arguments.delta', { item_id: item.id, output_index: i, delta: frag });
        ev('response.function_call_arguments.done', { item_id: item.id, output_index: i, arguments: toolArgs });
        ev('response.output_item.done', { output_index: i, item });
      } else {
        const part = (item.content as Json[])[0]!;
        ev('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', content: [] } });
        ev('response.content_part.added', {
          item_id: item.id,
          output_index: i,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        });
        for (const piece of streamPieces(text))
          ev('response.output_text.delta', { item_id: item.id, output_index: i, content_index: 0, delta: piece, logprobs: [] });
        ev('response.output_text.done', { item_id: item.id, output_index: i, content_index: 0, text, logprobs: [] });
        ev('response.content_part.done', { item_id: item.id, output_index: i, content_index: 0, part });
        ev('response.output_item.done', { output_index: i, item });
      }
    });
    ev('response.completed', { response: response('completed', output, ctx.fault.type === 'no-usage' ? null : usage) });
    frames[frames.length - 1]!.terminal = true;
    await streamFrames(ctx, frames, `event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "\n\n`);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string, rawBytes: Buffer = Buffer.from(raw)): Promise<void> {
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

    const protocol: Protocol =
      pathname.startsWith('/v1beta/') || req.headers['x-goog-api-key'] !== undefined
        ? 'gemini'
        : pathname.startsWith('/v1/messages') || req.headers['anthropic-version'] !== undefined
          ? 'anthropic'
          : 'openai';

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
        sendJson(
          ctx0,
          400,
          protocol === 'gemini' ? geminiError(400, msg) : protocol === 'anthropic' ? anthropicError('invalid_request_error', msg) : openaiError(msg),
        );
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
          if (protocol === 'gemini') errBody = geminiError(fault.status, geminiErrorMessage(fault.status));
          else if (protocol === 'anthropic') {
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
      case 'replay':
        if (!fault.stream) return sendJson(ctx, 200, fault.body);
        await streamFrames(
          {
            ...ctx,
            fault: fault.cutAfterEvents === undefined ? { type: 'ok' } : { type: 'cut', afterChunks: fault.cutAfterEvents, delayMs: fault.cutDelayMs },
          },
          fault.body
            .split(/(?<=\n\n)/)
            .filter((e) => e.trim() !== '')
            .map((data) => ({ data })),
          '',
        );
        return;
      default:
        break;
    }

    const method = req.method ?? 'GET';
    const notFound = () => {
      const msg = `Invalid URL (${method} ${url.pathname})`;
      if (protocol === 'gemini') sendJson(ctx, 404, geminiError(404, `Method not found: ${method} ${url.pathname}`));
      else sendJson(ctx, 404, protocol === 'anthropic' ? anthropicError('not_found_error', msg) : openaiError(msg));
    };
    const badJson = (): boolean => {
      if (jsonOk && isObj(json)) return false;
      if (protocol === 'gemini') sendJson(ctx, 400, geminiError(400, 'Invalid JSON payload received. Unexpected token.'));
      else if (protocol === 'anthropic')
        sendJson(ctx, 400, anthropicError('invalid_request_error', 'There was an error parsing the body of your request; expected a JSON object.'));
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

    if (pathname === '/v1beta/models' || pathname.startsWith('/v1beta/models/')) {
      const m = /^\/v1beta\/models\/([^/:]+)(?::([A-Za-z]+))?$/.exec(pathname);
      if (pathname === '/v1beta/models' || (m && m[2] === undefined)) {
        if (method !== 'GET') return notFound();
        if (geminiAuthOk(ctx, url)) geminiModels(ctx, m ? decodeURIComponent(m[1]!) : undefined);
        return;
      }
      const action = m?.[2];
      if (!m || method !== 'POST' || (action !== 'generateContent' && action !== 'streamGenerateContent' && action !== 'countTokens')) return notFound();
      if (!geminiAuthOk(ctx, url) || badJson()) return;
      const model = decodeURIComponent(m[1]!);
      if (action === 'countTokens') geminiCountTokens(ctx, json as Json, model);
      else await geminiGenerate(ctx, json as Json, model, action === 'generateContent' ? 'no' : url.searchParams.get('alt') === 'sse' ? 'sse' : 'array');
      return;
    }
    const modelMatch = /^\/v1\/models\/(.+)$/.exec(pathname);
    if (pathname === '/v1/models' || modelMatch) {
      if (method !== 'GET') return notFound();
      const id = modelMatch ? decodeURIComponent(modelMatch[1]!) : undefined;
      if (req.headers['anthropic-version'] !== undefined) {
        if (anthropicHeadersOk(ctx)) anthropicModels(ctx, id);
      } else if (openaiAuthOk(ctx)) openaiModels(ctx, id);
      return;
    }
    if (pathname === '/v1/videos' || pathname.startsWith('/v1/videos/')) {
      if (!openaiAuthOk(ctx)) return;
      let body = jsonOk && isObj(json) ? (json as Json) : undefined;
      const type = String(req.headers['content-type'] ?? '');
      if (type.startsWith('multipart/form-data')) {
        // OpenAI's API takes the video's fields as multipart (the reference image as a file).
        body = {};
        for (const [k, v] of await new Response(new Uint8Array(rawBytes), { headers: { 'content-type': type } }).formData())
          body[k] = typeof v === 'string' ? v : { file: v.name, type: v.type, bytes: v.size };
      }
      openaiVideos(ctx, method, pathname, body);
      return;
    }
    if (pathname === '/v1/chat/completions') {
      if (method !== 'POST') return notFound();
      if (!openaiAuthOk(ctx) || badJson()) return;
      await openaiChat(ctx, json as Json);
      return;
    }
    if (pathname === '/v1/responses') {
      if (method !== 'POST') return notFound();
      if (!openaiAuthOk(ctx) || badJson()) return;
      await openaiResponses(ctx, json as Json);
      return;
    }
    if (pathname === '/v1/responses/compact') {
      if (method !== 'POST') return notFound();
      if (!openaiAuthOk(ctx) || badJson()) return;
      openaiResponsesCompact(ctx, json as Json);
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
      const bytes = Buffer.concat(chunks);
      const raw = bytes.toString('utf8');
      handle(req, res, raw, bytes).catch((err: unknown) => {
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
    videosCreated() {
      return [...videos.values()].map((v) => ({ id: v.id, prompt: v.prompt }));
    },
    faultBytes: () => faultBytes,
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
