import { StringDecoder } from 'node:string_decoder';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';

/**
 * The longest SSE line, and event (its lines together), accepted from an upstream, in characters.
 * Real events are far smaller: a text delta is a few hundred bytes, the largest are a Responses
 * stream's terminal `response.completed` (the whole output again) and an image generation's
 * partial image (a few MB of base64). A hostile upstream that never ends a line or an event would
 * otherwise grow the parser's buffer without limit; past this the attempt fails as the upstream's.
 */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

const NO_LINES: string[] = [];

function tooLong(): UpstreamFailure {
  return new UpstreamFailure('protocol', `upstream sent an SSE event longer than ${MAX_SSE_EVENT_CHARS} characters`);
}

/**
 * Splits a byte stream into text lines (SSE framing: LF or CRLF), keeping a partial line, and the
 * bytes of a character split between reads, across chunks. node's StringDecoder rather than a
 * streaming TextDecoder: the same result in less time per chunk (docs/decisions/011-streaming-relay.md).
 * Only each chunk's own text is searched for line ends: a partial line is never scanned again, so a
 * long line costs time linear in its length (re-splitting it on every read was quadratic).
 */
export class SseLineSplitter {
  private rest = '';
  private readonly decoder = new StringDecoder('utf8');

  /** Throws UpstreamFailure('protocol') once a line grows past MAX_SSE_EVENT_CHARS. */
  push(chunk: Uint8Array): string[] {
    const text = this.decoder.write(chunk);
    const lines = text.split('\n');
    if (lines.length === 1) {
      this.rest += text;
      if (this.rest.length > MAX_SSE_EVENT_CHARS) throw tooLong();
      return NO_LINES;
    }
    if (this.rest) {
      lines[0] = this.rest + lines[0];
      if (lines[0].length > MAX_SSE_EVENT_CHARS) throw tooLong();
    }
    this.rest = lines.pop() ?? '';
    if (this.rest.length > MAX_SSE_EVENT_CHARS) throw tooLong();
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line.charCodeAt(line.length - 1) === 13) lines[i] = line.slice(0, -1);
    }
    return lines;
  }
}

/** One complete server-sent event: its `event` and joined `data` fields and its text as received. */
export interface SseEventText {
  readonly event: string;
  readonly data: string;
  readonly raw: string;
}

/** An event as read: its raw text is joined only when asked for (the identity mirror forwards it; others never read it). */
class ReadEvent implements SseEventText {
  constructor(
    private readonly lines: string[],
    readonly event: string,
    readonly data: string,
  ) {}

  get raw(): string {
    return `${this.lines.join('\n')}\n\n`;
  }
}

/** Incremental SSE parser: the complete events of each chunk, with their raw text (LF or CRLF framing). */
export class SseEventReader {
  private readonly splitter = new SseLineSplitter();
  private lines: string[] = [];
  /** Characters of `lines`: an event that never ends is refused at MAX_SSE_EVENT_CHARS. */
  private pending = 0;

  /** Throws UpstreamFailure('protocol') for a line or event longer than MAX_SSE_EVENT_CHARS. */
  push(chunk: Uint8Array): SseEventText[] {
    const events: SseEventText[] = [];
    for (const line of this.splitter.push(chunk)) {
      if (line !== '') {
        this.lines.push(line);
        if ((this.pending += line.length + 1) > MAX_SSE_EVENT_CHARS) throw tooLong();
        continue;
      }
      if (this.lines.length === 0) continue;
      let event = 'message';
      let data: string | undefined;
      for (const l of this.lines) {
        const colon = l.indexOf(':');
        const field = colon === -1 ? l : l.slice(0, colon);
        let value = colon === -1 ? '' : l.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      }
      events.push(new ReadEvent(this.lines, event, data ?? ''));
      this.lines = [];
      this.pending = 0;
    }
    return events;
  }
}
