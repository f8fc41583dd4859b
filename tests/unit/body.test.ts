import { describe, it, expect } from 'vitest';
import { readJsonBody, scanJson, upstreamBody, MAX_JSON_DEPTH, type JsonBody, type JsonObject } from '@/lib/gateway/body';
import type { GatewayRequest } from '@/lib/gateway/types';

const readBody = (raw: Buffer) =>
  readJsonBody({ headers: { 'content-type': 'application/json' }, readBody: async () => raw } as unknown as GatewayRequest, 1 << 20);

const body = (text: string): JsonBody => {
  const raw = Buffer.from(text);
  const json = JSON.parse(text) as JsonObject;
  return { raw, text, json, verbatim: scanJson(raw, MAX_JSON_DEPTH).topLevelKeys === Object.keys(json).length };
};

/** Reference: nesting depth of parsed JSON. */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

describe('scanJson', () => {
  it('counts the keys written at the top level, duplicates included, and nothing nested or inside strings', () => {
    expect(scanJson(Buffer.from('{}'), 128).topLevelKeys).toBe(0);
    expect(scanJson(Buffer.from('{"a":1,"b":{"a":2,"c":[1,{"d":3}]},"e":"x,\\"f\\":{"}'), 128).topLevelKeys).toBe(3);
    expect(scanJson(Buffer.from('{"model":"a","model":"b"}'), 128).topLevelKeys).toBe(2);
    // A key spelled with escapes is still a key.
    expect(scanJson(Buffer.from('{"mod\\u0065l":"a","model":"b"}'), 128).topLevelKeys).toBe(2);
    // Strings ending in an escaped backslash, then more structure.
    expect(scanJson(Buffer.from('{ "a" : "x\\\\" , "b":"\\\\\\"}" ,"c" :[ "," ] }'), 128).topLevelKeys).toBe(3);
    // Multi-byte UTF-8 (never ASCII inside) and whitespace of every kind.
    expect(scanJson(Buffer.from('{\n\t"é{":"你好,世界}",\r\n "😀":[]}'), 128).topLevelKeys).toBe(2);
  });

  it('refuses nesting beyond the limit, counting only brackets outside strings', () => {
    const nested = (n: number) => `{"a":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    expect(scanJson(Buffer.from(nested(128)), 128).topLevelKeys).toBe(1);
    expect(scanJson(Buffer.from(nested(129)), 128).topLevelKeys).toBe(-1);
    expect(scanJson(Buffer.from(`{"a":"${'['.repeat(500)}"}`), 128).topLevelKeys).toBe(1);
  });

  it('agrees with JSON.parse on random documents (keys, depth)', () => {
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const strings = ['', 'a', '"', '\\', '\\"', '{', '}', '[', ']', ',', ':', 'é', '😀', 'x\\\\', 'model'];
    const value = (d: number): unknown => {
      const k = rnd(d > 5 ? 4 : 7);
      if (k === 0) return rnd(1000) / 7;
      if (k === 1) return strings[rnd(strings.length)] + strings[rnd(strings.length)];
      if (k === 2) return [null, true, false][rnd(3)];
      if (k === 3) return -rnd(100);
      if (k === 4) return Array.from({ length: rnd(4) }, () => value(d + 1));
      const o: Record<string, unknown> = {};
      for (let i = rnd(5); i > 0; i--) o[strings[rnd(strings.length)] + i] = value(d + 1);
      return o;
    };
    for (let i = 0; i < 2000; i++) {
      const doc: Record<string, unknown> = {};
      for (let j = rnd(6); j > 0; j--) doc[strings[rnd(strings.length)] + j] = value(1);
      const text = JSON.stringify(doc, null, rnd(2) ? 0 : 2);
      const depth = depthOf(doc);
      expect(scanJson(Buffer.from(text), 128).topLevelKeys).toBe(Object.keys(doc).length);
      expect(scanJson(Buffer.from(text), depth).topLevelKeys).toBe(Object.keys(doc).length);
      if (depth > 1) expect(scanJson(Buffer.from(text), depth - 1).topLevelKeys).toBe(-1);
    }
  });
});

describe('upstreamBody', () => {
  const text = '{"model": "gpt-4o-mini",  "messages":[{"role":"user","content":"Hi"}], "temperature": 1.0 }\n';

  it('forwards the client bytes themselves when nothing changes', () => {
    const b = body(text);
    expect(upstreamBody(b, { model: 'gpt-4o-mini', service: undefined })).toBe(b.raw);
  });

  it('splices missing members in before the closing brace, keeping the bytes around them', () => {
    const out = upstreamBody(body(text), { model: 'gpt-4o-mini', stream_options: { include_usage: true } });
    expect(out.toString()).toBe(
      '{"model": "gpt-4o-mini",  "messages":[{"role":"user","content":"Hi"}], "temperature": 1.0 ,"stream_options":{"include_usage":true}}\n',
    );
    // A large body is spliced as bytes (multi-byte text included), not re-encoded.
    const long = `{"model":"m","messages":[{"role":"user","content":"${'héllo wörld 你好 '.repeat(3000)}"}]}`;
    const big = upstreamBody(body(long), { stream_options: { include_usage: true } });
    expect(Buffer.isBuffer(big)).toBe(true);
    expect(big.toString()).toBe(`${long.slice(0, -1)},"stream_options":{"include_usage":true}}`);
  });

  it('re-serialises when a member changes or is removed', () => {
    const b = body(text);
    expect(JSON.parse(upstreamBody(b, { model: 'gpt-4o' }).toString())).toEqual({ ...b.json, model: 'gpt-4o' });
    const withService = body('{"model":"m","messages":[],"service":{"region":"eu"}}');
    const out = upstreamBody(withService, { model: 'm', service: undefined }).toString();
    expect(out).toBe('{"model":"m","messages":[]}');
  });

  it('re-serialises a body with a duplicate top-level key: the upstream sees what was priced', () => {
    const b = body('{"model":"gpt-4o","messages":[],"model":"gpt-4o-mini"}');
    expect(b.verbatim).toBe(false);
    const out = upstreamBody(b, { model: 'gpt-4o-mini' }).toString();
    expect(out).toBe('{"model":"gpt-4o-mini","messages":[]}');
    // Also when the duplicate hides behind an escape.
    const escaped = body('{"mod\\u0065l":"gpt-4o","model":"gpt-4o-mini","messages":[]}');
    expect(escaped.verbatim).toBe(false);
    expect(JSON.parse(upstreamBody(escaped, { model: 'gpt-4o-mini' }).toString())).toEqual({ model: 'gpt-4o-mini', messages: [] });
  });

  it('readJsonBody: verbatim unless a top-level key repeats or the bytes are not valid UTF-8', async () => {
    expect((await readBody(Buffer.from('{"model":"m","messages":[{"content":"é \uFFFD"}]}'))).verbatim).toBe(true);
    expect((await readBody(Buffer.from('{"model":"m","model":"n"}'))).verbatim).toBe(false);
    const invalid = Buffer.concat([Buffer.from('{"model":"m","messages":[{"content":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
    const b = await readBody(invalid);
    expect(b.verbatim).toBe(false);
    const out = upstreamBody(b, { model: 'm' });
    expect(typeof out).toBe('string');
    expect(JSON.parse(out as string)).toEqual({ model: 'm', messages: [{ content: '\uFFFD(' }] });
  });

  it('keeps an own "__proto__" member as data, verbatim or re-serialised', () => {
    const b = body('{"__proto__":{"x":1},"model":"m"}');
    expect(b.verbatim).toBe(true);
    expect(upstreamBody(b, { model: 'm' })).toBe(b.raw);
    expect(upstreamBody(b, { model: 'n' }).toString()).toBe('{"__proto__":{"x":1},"model":"n"}');
  });
});
