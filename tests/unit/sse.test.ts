import { describe, expect, it } from 'vitest';
import { SseLineSplitter } from '@/lib/gateway/sse';

// The relays decode upstream bytes with it and forward the text: a character whose bytes arrive in
// two reads must reach the client whole, never as replacement characters.
describe('SseLineSplitter', () => {
  it('keeps a character split between reads whole, and a partial line until its end arrives', () => {
    const bytes = Buffer.from('data: {"delta":"héllo 🙂 世界"}\n\ndata: [DONE]\n\n');
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = new SseLineSplitter();
      const lines = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut))];
      expect(lines).toEqual(['data: {"delta":"héllo 🙂 世界"}', '', 'data: [DONE]', '']);
    }
  });

  it('splits on LF and CRLF, one byte at a time too', () => {
    const s = new SseLineSplitter();
    const lines: string[] = [];
    for (const b of Buffer.from('event: a\r\ndata: 1\r\n\r\ndata: ü\n')) lines.push(...s.push(Uint8Array.of(b)));
    expect(lines).toEqual(['event: a', 'data: 1', '', 'data: ü']);
    expect(s.push(Buffer.from('tail without newline'))).toEqual([]);
  });
});
