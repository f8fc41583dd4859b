/** Splits a byte stream into text lines (SSE framing), keeping a partial line across chunks. */
export class SseLineSplitter {
  private rest = '';
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): string[] {
    const text = this.rest + this.decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  }
}
