// A test operator config with video models on the fake upstream's OpenAI video API.
import { randomBytes } from 'node:crypto';
import { testConfig } from './gateway';

export const VIDEO_MODEL = 'sora-test';
/** Its platform-wide daily cap (2) lives in Redis for a day: a name of its own per run, so runs never share it. */
export const CAPPED_VIDEO_MODEL = `sora-capped-${randomBytes(4).toString('hex')}`;
/** USD per second of VIDEO_MODEL. */
export const VIDEO_PRICE = '0.1';

export function videoConfig(openaiUrls: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return withVideoModels(testConfig({ openaiUrls, overrides: extra }));
}

/** Adds the video models to a test config, served by its OpenAI-protocol channels. */
export function withVideoModels(config: Record<string, unknown>): Record<string, unknown> {
  const base = { owned_by: 'openai', kind: 'video', tags: ['video'], price_usd_per_second: VIDEO_PRICE, max_seconds: 20, rpm: 30, concurrency: 3 };
  (config.models as unknown[]).push(
    { ...base, name: VIDEO_MODEL, platform_daily_requests: 1000 },
    { ...base, name: CAPPED_VIDEO_MODEL, platform_daily_requests: 2 },
  );
  for (const c of config.channels as { protocol: string; models: string[] }[]) if (c.protocol === 'openai') c.models.push(VIDEO_MODEL, CAPPED_VIDEO_MODEL);
  return config;
}

export const FAST_JOBS_ENV = {
  VIDEO_POLL_MS: '200',
  JOBS_POLL_MS: '200',
  JOBS_HEARTBEAT_MS: '300',
  JOBS_STALE_MS: '4000',
  JOBS_RETRY_BASE_MS: '200',
};
