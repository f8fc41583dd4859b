// Video storage (lib/gateway/videos/storage.ts): the local directory and an S3-compatible bucket through
// the AWS SDK, the latter against a small in-test S3 server (path-style PUT, HEAD, ranged GET,
// DELETE) that keeps what it is sent and checks each request is signed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '@/lib/config';
import { videoStorage } from '@/lib/gateway/videos/storage';

const objects = new Map<string, Buffer>();
const seen: { method: string; url: string; auth: string | undefined }[] = [];
let s3: http.Server;
let endpoint: string;

/** Decodes an aws-chunked body (the SDK's streaming checksums), else answers it as sent. */
function decodeBody(req: http.IncomingMessage, raw: Buffer): Buffer {
  if (!String(req.headers['content-encoding'] ?? '').includes('aws-chunked') && req.headers['x-amz-content-sha256'] !== 'STREAMING-UNSIGNED-PAYLOAD-TRAILER')
    return raw;
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, eol).toString().split(';')[0], 16);
    if (!size) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

beforeAll(async () => {
  s3 = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization });
      const key = decodeURIComponent(new URL(req.url!, 'http://x').pathname);
      const obj = objects.get(key);
      if (req.method === 'PUT') {
        objects.set(key, decodeBody(req, Buffer.concat(chunks)));
        res.writeHead(200, { etag: '"x"' }).end();
      } else if (req.method === 'HEAD') {
        if (!obj) res.writeHead(404).end();
        else res.writeHead(200, { 'content-length': String(obj.length) }).end();
      } else if (req.method === 'GET') {
        if (!obj) return void res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
        const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
        const [a, b] = m ? [Number(m[1]), Math.min(Number(m[2]), obj.length - 1)] : [0, obj.length - 1];
        res.writeHead(m ? 206 : 200, { 'content-length': String(b - a + 1), ...(m ? { 'content-range': `bytes ${a}-${b}/${obj.length}` } : {}) });
        res.end(obj.subarray(a, b + 1));
      } else if (req.method === 'DELETE') {
        objects.delete(key);
        res.writeHead(204).end();
      } else res.writeHead(405).end();
    });
  });
  await new Promise<void>((r) => s3.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((r) => s3.close(r)));

const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
const readAll = async (r: Readable) => {
  const out: Buffer[] = [];
  for await (const c of r) out.push(c as Buffer);
  return Buffer.concat(out);
};

describe('video storage', () => {
  it('an S3-compatible bucket: stores, sizes, reads a range and deletes, every request signed', async () => {
    process.env.TEST_S3_KEY = 'AKIDEXAMPLE';
    process.env.TEST_S3_SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    const cfg = {
      videos: {
        retention_days: 7,
        storage: {
          type: 's3',
          bucket: 'vids',
          region: 'us-east-1',
          endpoint,
          prefix: 'videos/',
          force_path_style: true,
          access_key_id_env: 'TEST_S3_KEY',
          secret_access_key_env: 'TEST_S3_SECRET',
        },
      },
    } as unknown as GatewayConfig;
    const storage = videoStorage(cfg);
    expect(await storage.put('video_1.mp4', Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]))).toBe(5000);
    expect(objects.get('/vids/videos/video_1.mp4')?.equals(bytes)).toBe(true);
    expect(await storage.size('video_1.mp4')).toBe(5000);
    expect(await storage.size('missing.mp4')).toBeNull();
    expect((await readAll(await storage.read('video_1.mp4', 100, 199))).equals(bytes.subarray(100, 200))).toBe(true);
    await storage.remove('video_1.mp4');
    expect(objects.has('/vids/videos/video_1.mp4')).toBe(false);
    expect(seen.every((r) => r.auth?.startsWith('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/'))).toBe(true);
  });

  it('a local directory: the same operations', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-video-store-'));
    try {
      const storage = videoStorage({ videos: { retention_days: 7, storage: { type: 'local', dir } } } as unknown as GatewayConfig);
      expect(await storage.put('video_2.mp4', Readable.from([bytes]))).toBe(5000);
      expect(await storage.size('video_2.mp4')).toBe(5000);
      expect((await readAll(await storage.read('video_2.mp4', 4990, 4999))).equals(bytes.subarray(4990))).toBe(true);
      await storage.remove('video_2.mp4');
      expect(await storage.size('video_2.mp4')).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
