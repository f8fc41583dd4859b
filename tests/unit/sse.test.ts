import { describe, expect, it } from 'vitest';
import { MAX_SSE_EVENT_CHARS, SseEventReader, SseLineSplitter } from '@/lib/gateway/sse';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';

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

// A hostile upstream may never end a line or an event: the parser's work stays linear in the bytes
// and its buffer bounded (MAX_SSE_EVENT_CHARS); past the bound the read fails as the upstream's fault.
describe('SSE bounds', () => {
  it('a line that never ends is scanned once per byte: 15 MiB in 4 KiB reads takes well under a second of CPU', () => {
    const piece = Buffer.alloc(4 * 1024, 'x');
    const s = new SseLineSplitter();
    const start = process.cpuUsage();
    s.push(Buffer.from('data: '));
    for (let i = 0; i < 3840; i++) expect(s.push(piece)).toEqual([]);
    const lines = s.push(Buffer.from('\n'));
    const cpu = process.cpuUsage(start);
    expect(lines[0].length).toBe(6 + 3840 * piece.length);
    // Re-splitting the partial line on every read scanned ~30 GB here (8 s of CPU for a quarter of it).
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(3000);
  });

  it('a line or an event longer than MAX_SSE_EVENT_CHARS fails as an upstream protocol error', () => {
    const s = new SseLineSplitter();
    const big = Buffer.alloc(1024 * 1024, 'x');
    expect(() => {
      for (let i = 0; i <= MAX_SSE_EVENT_CHARS / big.length; i++) s.push(big);
    }).toThrow(UpstreamFailure);

    // Lines of an event that never ends (no blank line) count together.
    const r = new SseEventReader();
    const line = Buffer.from(`data: ${'y'.repeat(1024 * 1024 - 7)}\n`);
    expect(() => {
      for (let i = 0; i <= MAX_SSE_EVENT_CHARS / line.length; i++) r.push(line);
    }).toThrow(/SSE event longer than/);

    // Events under the bound, however many, pass.
    const ok = new SseEventReader();
    let events = 0;
    for (let i = 0; i < 40; i++) events += ok.push(Buffer.concat([line, Buffer.from('\n')])).length;
    expect(events).toBe(40);
  });
});
