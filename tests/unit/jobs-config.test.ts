// The operator config of jobs, videos and batches (docs/decisions/037): video models priced per
// second, the Batch API's discount, the storage choice, and the errors that name the field.
import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError, loadConfigFile } from '@/lib/config';
import { testConfig } from '../support/gateway';
import { webhookPayload } from '@/lib/gateway/jobs/engine';

const valid = () => testConfig({ openaiUrls: ['http://127.0.0.1:1'] }) as Record<string, unknown>;

function errorOf(data: unknown): string {
  try {
    buildConfig(data, 'test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('config was accepted');
}

describe('jobs, videos and batches in the operator config', () => {
  it('the shipped example: the spec video model is a video model priced per second, with its caps; defaults for jobs and batches', () => {
    const cfg = loadConfigFile('config/gateway.example.yaml');
    expect(cfg.models.get('kling-video')).toMatchObject({
      kind: 'video',
      videoPricePerSecond: 100_000_000_000n,
      rpm: 30,
      concurrency: 3,
      platformDailyRequests: 1000,
    });
    expect(cfg.jobs).toEqual({ account_concurrency: 4, platform_concurrency: 64 });
    expect(cfg.videos).toEqual({ retention_days: 7, storage: { type: 'local', dir: 'videos' } });
    expect(cfg.batches.discount_percent).toBe(50);
    expect(cfg.models.get('gpt-4o-mini')!.batchDiscountPercent).toBe(50);
  });

  it('defaults without the sections; a model may set its own batch discount; S3 storage', () => {
    const raw = valid();
    (raw.models as Record<string, unknown>[])[0].batch_discount_percent = 25;
    raw.videos = { storage: { type: 's3', bucket: 'vids', endpoint: 'https://s3.example.com', force_path_style: true } };
    const cfg = buildConfig(raw, 'test.yaml');
    expect(cfg.models.get('gpt-4o-mini')!.batchDiscountPercent).toBe(25);
    expect(cfg.models.get('gpt-4o')!.batchDiscountPercent).toBe(50);
    expect(cfg.videos.storage).toEqual({
      type: 's3',
      bucket: 'vids',
      region: 'us-east-1',
      endpoint: 'https://s3.example.com',
      prefix: 'videos/',
      force_path_style: true,
    });
    expect(cfg.jobs.account_concurrency).toBe(4);
  });

  it('refuses a video model without its price, a chat model without its context window, a bad discount, naming the field', () => {
    const noPrice = valid();
    (noPrice.models as unknown[]).push({ name: 'v', owned_by: 'x', kind: 'video' });
    expect(errorOf(noPrice)).toMatch(/models\[\d+\]\.price_usd_per_second: video models need price_usd_per_second/);
    const noWindow = valid();
    delete (noWindow.models as Record<string, unknown>[])[0].context_window;
    expect(errorOf(noWindow)).toContain('models[0].context_window');
    const badDiscount = valid();
    badDiscount.batches = { discount_percent: 150 };
    expect(errorOf(badDiscount)).toContain('batches.discount_percent');
  });

  it('batch files are kept batches.file_retention_days (30 by default, fractions allowed), refused at zero, below or past ten years', () => {
    expect(buildConfig(valid(), 'test.yaml').batches.file_retention_days).toBe(30);
    const half = valid();
    half.batches = { file_retention_days: 0.5 };
    expect(buildConfig(half, 'test.yaml').batches).toMatchObject({ file_retention_days: 0.5, discount_percent: 50 });
    for (const bad of [0, -1, 3651, '7']) {
      const raw = valid();
      raw.batches = { file_retention_days: bad };
      expect(errorOf(raw)).toContain('batches.file_retention_days');
    }
  });

  it("a finished job's webhook in OpenAI's event shape, its id the same on every instance and retry", () => {
    const at = new Date('2026-11-28T07:00:00Z');
    const a = webhookPayload('video', { id: 'video_1', status: 'succeeded', finishedAt: at });
    expect(a).toEqual({ id: a.id, object: 'event', type: 'video.completed', created_at: 1795849200, data: { id: 'video_1' } });
    expect(webhookPayload('video', { id: 'video_1', status: 'succeeded', finishedAt: new Date() }).id).toBe(a.id);
    expect(webhookPayload('batch', { id: 'batch_1', status: 'cancelled', finishedAt: at }).type).toBe('batch.cancelled');
  });
});
