import type { Tiktoken } from 'js-tiktoken/lite';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { singleton } from '@/lib/singleton';

// Token counts for upstreams that report no usage, and for service-auto's context-window fit. The
// encoder (a few MB of ranks) is loaded on first use only, so requests whose upstream reports usage
// never pay for it.
//
// js-tiktoken's byte-pair merge is quadratic in the length of one pre-tokenized piece (a "word"):
// a 10,000-character word takes tens of seconds, on the event loop, and any caller can send one.
// Counting here is therefore ours around the library's encoder, not a call to it on the whole text:
// - a run of space or of non-space characters longer than MAX_PIECE (no real word or indentation
//   is) is encoded in slices, or when long, estimated from a few slices: constant work per run (an
//   estimate, as every count here);
// - long texts are encoded slice by slice, yielding to the event loop every SLICE_BUDGET_MS, so
//   other requests and /healthz are not held up while a 4 MiB prompt is counted;
// - callers that only need to know whether a count exceeds a limit stop there;
// - one count encodes at most MAX_EXACT_CHARS (a few tens of milliseconds of CPU); text past it
//   is estimated at promptTokenBound of its bytes, the bound the balance reservation uses, which
//   is above the real count for any ordinary text (an estimate errs high, never low);
// - a count made for a client that has left (its signal) stops at the next slice.
// A worker thread would also free the loop, but the quadratic cost would remain (CPU for minutes
// per request) and the bundled server would need a separate worker entry point.

function encoder(): Promise<Tiktoken> {
  return singleton('tiktoken', async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([import('js-tiktoken/lite'), import('js-tiktoken/ranks/o200k_base')]);
    return new Tiktoken(ranks.default);
  });
}

/** Longest run of non-space characters encoded in one call (keeps the merge linear overall). */
const MAX_PIECE = 64;
/** Slices of a long run encoded to estimate the whole run (see addRun). */
const RUN_SAMPLES = 4;
/** Text encoded between checks of the clock. */
const SLICE_CHARS = 1024;
/** Longest the event loop is held by counting before it yields. */
const SLICE_BUDGET_MS = 4;

/**
 * Characters one count encodes exactly (~80 ms of CPU at worst on this encoder); the rest of a
 * longer text is estimated from its bytes.
 */
export const MAX_EXACT_CHARS = 256 * 1024;

/** Shared across the texts of one count: the running total, the limit and the time slice. */
interface Counter {
  enc: Tiktoken;
  total: number;
  limit: number;
  sliceStart: number;
  /** Characters still to be encoded exactly. */
  exact: number;
  signal?: CountSignal;
}

/** What a count reads of its client's signal. */
export interface CountSignal {
  readonly aborted: boolean;
}

/** Thrown into a count whose client has left: nothing will use its answer. */
export class CountAborted extends Error {
  constructor() {
    super('token count abandoned: the client has gone');
  }
}

/** A cut at or before `at` that does not split a surrogate pair. */
function cutAt(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return c >= 0xdc00 && c <= 0xdfff ? at - 1 : at;
}

async function encodeSlice(counter: Counter, slice: string, yieldOnly = false): Promise<void> {
  if (!slice && !yieldOnly) return;
  if (slice) counter.total += counter.enc.encode(slice, [], []).length;
  if (performance.now() - counter.sliceStart > SLICE_BUDGET_MS) {
    await yieldToLoop();
    if (counter.signal?.aborted) throw new CountAborted();
    counter.sliceStart = performance.now();
  }
}

/** Text without long runs, in slices cut at whitespace where possible. */
async function encodePlain(counter: Counter, text: string): Promise<void> {
  let from = 0;
  while (from < text.length && counter.total <= counter.limit) {
    if (text.length - from <= SLICE_CHARS) return encodeSlice(counter, text.slice(from));
    let to = text.lastIndexOf(' ', from + SLICE_CHARS);
    if (to <= from) to = cutAt(text, from + SLICE_CHARS);
    await encodeSlice(counter, text.slice(from, to));
    from = to;
  }
}

/**
 * A run of space or of non-space characters longer than MAX_PIECE (no word is: a blob, a repeated
 * character, a wall of emoji or of blank lines). Short ones are encoded in slices; longer ones are estimated from RUN_SAMPLES
 * slices spread over the run (tokens per character, times its length): constant work per run.
 */
async function addRun(counter: Counter, run: string): Promise<void> {
  if (run.length <= MAX_PIECE * RUN_SAMPLES) {
    for (let at = 0; at < run.length;) {
      const to = Math.min(run.length, cutAt(run, at + MAX_PIECE));
      await encodeSlice(counter, run.slice(at, to));
      at = to;
    }
    return;
  }
  let tokens = 0;
  let chars = 0;
  for (let i = 0; i < RUN_SAMPLES; i++) {
    const at = Math.max(0, cutAt(run, Math.floor(((run.length - MAX_PIECE) * i) / (RUN_SAMPLES - 1))));
    const sample = run.slice(at, cutAt(run, at + MAX_PIECE));
    tokens += counter.enc.encode(sample, [], []).length;
    chars += sample.length;
  }
  counter.total += Math.ceil((tokens / chars) * run.length);
}

/**
 * Whitespace exactly as the pre-tokenizer splits on it: its pattern's `\s` under the `u` flag
 * (js-tiktoken compiles it with "ug"), read off the same class once for every UTF-16 unit. A
 * character the pre-tokenizer takes as space but this split did not (U+202F, U+FEFF once) joined
 * every slice into one piece, and the merge went quadratic. `\s` has no astral characters, and a
 * surrogate half is never space.
 */
const SPACE = (() => {
  const table = new Uint8Array(0x10000);
  const space = /\s/u;
  for (let c = 0; c < 0x10000; c++) if (space.test(String.fromCharCode(c))) table[c] = 1;
  return table;
})();

export function isSpace(c: number): boolean {
  return SPACE[c] === 1;
}

async function add(counter: Counter, text: string): Promise<void> {
  if (!text) return;
  if (text.length > counter.exact) {
    // Past the exact budget: the head is counted, the rest estimated high from its bytes.
    const head = counter.exact > 0 ? cutAt(text, counter.exact) : 0;
    const rest = text.slice(head);
    if (head > 0) await add(counter, text.slice(0, head));
    counter.exact = 0;
    counter.total += promptTokenBound(Buffer.byteLength(rest));
    return;
  }
  counter.exact -= text.length;
  if (text.length <= MAX_PIECE) {
    counter.total += counter.enc.encode(text, [], []).length;
    return;
  }
  // One pass by character code (a regex costs far more per character than a charCodeAt loop): a piece
  // of the pre-tokenizer never spans a change between space and non-space, so bounding the runs of
  // each class bounds every piece. Plain text goes to encodePlain, long runs to addRun.
  let from = 0;
  let runStart = 0;
  let runSpace = isSpace(text.charCodeAt(0));
  for (let i = 1; i <= text.length && counter.total <= counter.limit; i++) {
    const space = i < text.length ? isSpace(text.charCodeAt(i)) : !runSpace;
    if (space === runSpace) {
      if ((i & 0xfff) === 0 && performance.now() - counter.sliceStart > SLICE_BUDGET_MS) await encodeSlice(counter, '', true);
      continue;
    }
    if (i - runStart > MAX_PIECE) {
      await encodePlain(counter, text.slice(from, runStart));
      await addRun(counter, text.slice(runStart, i));
      from = i;
    }
    runStart = i;
    runSpace = space;
  }
  if (counter.total <= counter.limit) await encodePlain(counter, text.slice(from));
}

async function counter(limit: number, signal: CountSignal | undefined): Promise<Counter> {
  return { enc: await encoder(), total: 0, limit, sliceStart: performance.now(), exact: MAX_EXACT_CHARS, signal };
}

/**
 * Tokens of `text`; with a limit, counting stops once past it (the answer is then > limit). With
 * a signal, an abort stops the count (CountAborted) at its next yield.
 */
export async function countTokens(text: string, limit = Infinity, signal?: CountSignal): Promise<number> {
  if (!text) return 0;
  const c = await counter(limit, signal);
  await add(c, text);
  return c.total;
}

/** Tokens of several texts, counted as one (one exact budget for them all). */
export async function countTextsTokens(texts: string[]): Promise<number> {
  const c = await counter(Infinity, undefined);
  for (const t of texts) await add(c, t);
  return c.total;
}

/**
 * Text of OpenAI-style messages (string or content-part arrays) plus the per-message overhead;
 * with a limit, counting stops once past it.
 */
export async function countMessageTokens(messages: unknown, limit = Infinity, signal?: CountSignal): Promise<number> {
  if (!Array.isArray(messages)) return 0;
  const c = await counter(limit, signal);
  c.total = 3;
  for (const m of messages) {
    if (c.total > limit) break;
    c.total += 4;
    await add(c, textOf((m as { content?: unknown }).content));
  }
  return c.total;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : ((p as { text?: string }).text ?? ''))).join('');
  return '';
}

/**
 * A cheap upper bound of prompt tokens for the balance reservation: no tokenizer on the hot path.
 * A token is practically never shorter than two bytes of the JSON body (CJK is ~3 bytes a token).
 */
export function promptTokenBound(bodyBytes: number): number {
  return Math.ceil(bodyBytes / 2);
}
