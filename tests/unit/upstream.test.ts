// The upstream client (lib/gateway/upstream.ts) against a real local HTTP server: replies are read
// once, a slow reader holds the upstream back instead of the gateway buffering the whole reply,
// and stopping a reply or a call closes the upstream connection.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelInfo } from '@/lib/config';
import { OnceSignal } from '@/lib/gateway/signal';
import { UpstreamFailure, callUpstream, discard, readUpstreamBody, type CallOptions } from '@/lib/gateway/upstream';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** 480 KiB of numbered lines: any chunk out of place shows. */
const LINES = Array.from({ length: 60_000 }, (_, i) => String(i).padStart(7, '0')).join('\n');

/** Per request: whether the server finished writing its reply, and whether the connection closed. */
interface Seen {
  finished: boolean;
  closed: boolean;
  written: number;
}

let server: http.Server;
let channel: ChannelInfo;
const seen = new Map<string, Seen>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const s: Seen = { finished: false, closed: false, written: 0 };
    seen.set(req.url!, s);
    res.on('finish', () => (s.finished = true));
    res.on('close', () => (s.closed = !s.finished));
    req.resume();
    req.on('end', () => {
      if (req.url === '/hang') return; // never answers
      if (req.url === '/lines') return void res.end(LINES);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const total = req.url === '/big' ? 48 * MB : req.url === '/small' ? 1000 : 256 * 1024;
      const chunk = Buffer.alloc(64 * 1024, 'x');
      // Writes as fast as the connection takes it: stops at backpressure, goes on at 'drain'.
      const pump = () => {
        while (s.written < total) {
          const n = Math.min(chunk.length, total - s.written);
          s.written += n;
          if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  channel = {
    name: 'unit-upstream',
    protocol: 'openai',
    baseUrl: `http://127.0.0.1:${port}/`,
    apiKey: 'sk-unit',
    models: [],
    priority: 0,
    weight: 1,
    timeouts: { connectMs: 2000, firstByteMs: 5000, idleMs: 5000 },
  };
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const call = (path: string, signal = new OnceSignal(), options?: CallOptions) => callUpstream(channel, path, '{}', {}, signal, options);

describe('upstream replies', () => {
  it('a reader that does not keep up holds the upstream back; every byte still arrives, in order', async () => {
    const res = await call('/big');
    expect(res.status).toBe(200);
    await sleep(500);
    const s = seen.get('/big')!;
    // Without backpressure the whole 48 MB would sit in the gateway's memory by now.
    expect(s.finished).toBe(false);
    expect(s.written).toBeLessThan(40 * MB);
    let total = 0;
    let ok = true;
    for await (const chunk of res.body) {
      total += chunk.length;
      if (chunk[0] !== 0x78 || chunk[chunk.length - 1] !== 0x78) ok = false;
    }
    expect(total).toBe(48 * MB);
    expect(ok).toBe(true);
    expect(s.finished).toBe(true);
  });

  it('readUpstreamBody takes queued and later chunks, and refuses a reply over its cap', async () => {
    const res = await call('/mid');
    await sleep(50);
    expect(await readUpstreamBody(res.body, MB)).toHaveLength(256 * 1024);
    const over = await call('/mid');
    await expect(readUpstreamBody(over.body, 100 * 1024)).rejects.toThrow(new UpstreamFailure('protocol', `upstream reply larger than ${100 * 1024} bytes`));
  });

  it('readUpstreamBody keeps the order of queued chunks and those the socket still holds', async () => {
    // Read after a wait, the reply has paused the socket (more than 64 KiB queued); resuming it
    // hands over what the socket holds at once, which must follow the queue. Once it came first:
    // a 5 MB reply judged "malformed JSON" in tests/integration/reliability.test.ts.
    for (let i = 0; i < 5; i++) {
      const res = await call('/lines');
      await sleep(50);
      const text = await readUpstreamBody(res.body, MB);
      expect(text.length).toBe(LINES.length);
      expect(text === LINES, `out of order at ${[...text].findIndex((c, j) => c !== LINES[j])}`).toBe(true);
    }
  });

  it('leaving a for-await early closes the upstream connection', async () => {
    const res = await call('/big');
    for await (const chunk of res.body) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    await sleep(200);
    expect(seen.get('/big')!.closed).toBe(true);
    expect(res.body.destroyed).toBe(true);
  });

  it('destroy() fails a pending read with an abort and closes the connection', async () => {
    const res = await call('/big');
    const it = res.body[Symbol.asyncIterator]();
    // Drain what is queued, then wait on the next chunk while destroying.
    await sleep(100);
    const reading = (async () => {
      for (;;) {
        const r = await it.next();
        if (r.done) return 'ended';
      }
    })();
    res.body.destroy();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    await sleep(200);
    expect(seen.get('/big')!.closed).toBe(true);
  });

  it('discard() reads a reply to its end so the connection can be reused', async () => {
    const res = await call('/small');
    discard(res.body);
    await sleep(100);
    expect(seen.get('/small')!.finished).toBe(true);
    expect(seen.get('/small')!.closed).toBe(false);
  });
});

describe('cancelling a call', () => {
  it('the signal settles a call at once while the upstream has not answered, and closes the connection', async () => {
    const signal = new OnceSignal();
    const pending = call('/hang', signal);
    await sleep(100);
    const t0 = performance.now();
    signal.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - t0).toBeLessThan(100);
    await sleep(100);
    expect(seen.get('/hang')!.closed).toBe(true);
  });

  it('an already aborted signal never reaches the upstream', async () => {
    const signal = new OnceSignal();
    signal.abort();
    seen.delete('/small');
    await expect(call('/small', signal)).rejects.toMatchObject({ name: 'AbortError' });
    await sleep(50);
    expect(seen.has('/small')).toBe(false);
  });

  it('without detaching, the signal also stops the body; detached, the reply is read to its end', async () => {
    const attached = new OnceSignal();
    const a = await call('/mid', attached);
    attached.abort();
    await expect(readUpstreamBody(a.body, MB)).rejects.toThrow();

    const detached = new OnceSignal();
    const d = await call('/mid', detached, { detachOnHeaders: true });
    detached.abort();
    expect(await readUpstreamBody(d.body, MB)).toHaveLength(256 * 1024);
  });
});
