// Where generated videos are kept (operator config `videos.storage`): a directory under DATA_DIR
// by default, or an S3-compatible bucket through the AWS SDK (@aws-sdk/client-s3: the maintained
// client, which signs requests and speaks every S3-compatible service).
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { env } from '@/lib/env';
import type { GatewayConfig } from '@/lib/config';
import { singleton } from '@/lib/singleton';

export interface VideoStorage {
  /** Stores the whole stream under `key`; answers its size in bytes. */
  put(key: string, body: Readable): Promise<number>;
  /** Its size, or null when absent. */
  size(key: string): Promise<number | null>;
  /** Bytes start..end (inclusive). */
  read(key: string, start: number, end: number): Promise<Readable>;
  remove(key: string): Promise<void>;
}

class LocalStorage implements VideoStorage {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, key.replace(/[^a-zA-Z0-9._-]/g, '_'));
  }

  async put(key: string, body: Readable): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    const file = this.file(key);
    const tmp = `${file}.${process.pid}.part`;
    await pipeline(body, createWriteStream(tmp));
    await rename(tmp, file);
    return (await stat(file)).size;
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.file(key))).size;
    } catch {
      return null;
    }
  }

  async read(key: string, start: number, end: number): Promise<Readable> {
    return createReadStream(this.file(key), { start, end });
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }
}

type S3Config = Extract<GatewayConfig['videos']['storage'], { type: 's3' }>;

class S3Storage implements VideoStorage {
  private client?: import('@aws-sdk/client-s3').S3Client;
  constructor(private readonly cfg: S3Config) {}

  private async s3() {
    const sdk = await import('@aws-sdk/client-s3');
    if (!this.client) {
      const id = this.cfg.access_key_id_env ? process.env[this.cfg.access_key_id_env] : undefined;
      const secret = this.cfg.secret_access_key_env ? process.env[this.cfg.secret_access_key_env] : undefined;
      this.client = new sdk.S3Client({
        region: this.cfg.region,
        endpoint: this.cfg.endpoint,
        forcePathStyle: this.cfg.force_path_style,
        credentials: id && secret ? { accessKeyId: id, secretAccessKey: secret } : undefined,
      });
    }
    return { sdk, client: this.client };
  }

  private key(key: string): string {
    return this.cfg.prefix + key;
  }

  async put(key: string, body: Readable): Promise<number> {
    // PutObject needs the length up front: the download is buffered (a video is tens of MB at most).
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    const data = Buffer.concat(chunks);
    const { sdk, client } = await this.s3();
    await client.send(
      new sdk.PutObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key), Body: data, ContentType: 'video/mp4', ContentLength: data.length }),
    );
    return data.length;
  }

  async size(key: string): Promise<number | null> {
    const { sdk, client } = await this.s3();
    try {
      const head = await client.send(new sdk.HeadObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key) }));
      return head.ContentLength ?? null;
    } catch {
      return null;
    }
  }

  async read(key: string, start: number, end: number): Promise<Readable> {
    const { sdk, client } = await this.s3();
    const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key), Range: `bytes=${start}-${end}` }));
    return out.Body as Readable;
  }

  async remove(key: string): Promise<void> {
    const { sdk, client } = await this.s3();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key) }));
  }
}

/** The storage of this config (one per config object). */
export function videoStorage(cfg: GatewayConfig): VideoStorage {
  const s = cfg.videos.storage;
  return singleton(`video-storage:${JSON.stringify(s)}`, () => (s.type === 's3' ? new S3Storage(s) : new LocalStorage(path.resolve(env.DATA_DIR, s.dir))));
}
