// Recorded upstream streams for translator tests: the SSE text of a fixture cut into events the way
// the gateway's reader hands them to a StreamTranslator, and a client stream parsed back.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SseEvent } from '@/lib/gateway/translate/types';

const FIXTURES = path.resolve(__dirname, '../fixtures');

export function fixtureText(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

/** SSE text -> events (LF or CRLF separators; `event:` defaults to "message"; data lines joined with "\n"). */
export function sseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split('\n\n')) {
    if (block.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
    }
    events.push({ event, data: data.join('\n'), raw: `${block}\n\n` });
  }
  return events;
}

/** An OpenAI-style client stream (`data: <json>` events, `data: [DONE]`): the JSON chunks, and whether [DONE] ended it. */
export function parseDataStream(text: string): { chunks: Record<string, unknown>[]; done: boolean } {
  const chunks: Record<string, unknown>[] = [];
  let done = false;
  for (const block of text.split('\n\n')) {
    if (block === '') continue;
    if (!block.startsWith('data: ') || block.includes('\n')) throw new Error(`not a data-only SSE event: ${JSON.stringify(block)}`);
    const data = block.slice(6);
    if (done) throw new Error('an event after [DONE]');
    if (data === '[DONE]') done = true;
    else chunks.push(JSON.parse(data) as Record<string, unknown>);
  }
  return { chunks, done };
}
