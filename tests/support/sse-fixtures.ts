// Recorded upstream replies for translator tests: fixture files, SSE text split into the events
// the pipeline's reader hands a StreamTranslator, and client-side SSE parsed back for assertions.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import path from 'node:path';
import type { SseEvent } from '@/lib/gateway/translate/types';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

export function fixture(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

/** SSE text -> events (LF or CRLF line ends, blank-line separated), as the pipeline's reader yields them. */
export function sseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/).filter((l) => l !== '');
    if (lines.length === 0) continue;
    let event = 'message';
    const data: string[] = [];
    for (const l of lines) {
      const colon = l.indexOf(':');
      const field = colon === -1 ? l : l.slice(0, colon);
      let value = colon === -1 ? '' : l.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    events.push({ event, data: data.join('\n'), raw: `${lines.join('\n')}\n\n` });
  }
  return events;
}

export interface ParsedEvent {
  event: string;
  data: unknown;
}

/** The client-side bytes a translator wrote, parsed: each event's name and JSON data ('[DONE]' kept as a string). */
export function parseClientSse(text: string): ParsedEvent[] {
  expect(text.endsWith('\n\n') || text === '').toBe(true);
  return sseEvents(text).map((e) => ({ event: e.event, data: e.data === '[DONE]' ? e.data : (JSON.parse(e.data) as unknown) }));
}
