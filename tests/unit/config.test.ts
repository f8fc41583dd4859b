import { describe, it, expect } from 'vitest';
import { buildConfig, loadConfigFile, ConfigError } from '@/lib/config';
import { testConfig } from '../support/gateway';

const valid = () => testConfig({ openaiUrls: ['http://127.0.0.1:1'], anthropicUrls: ['http://127.0.0.1:2'] });

function errorOf(data: unknown): string {
  try {
    buildConfig(data, 'test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('config was accepted');
}

describe('operator config', () => {
  it('loads the shipped example with the spec tiers, models and rate', () => {
    const cfg = loadConfigFile('config/gateway.example.yaml');
    expect(cfg.tiers.free).toMatchObject({ rpm: 60, rph: 600, tokensPerDay: 100000, concurrency: 2 });
    expect(cfg.tiers.pro).toMatchObject({ rpm: 300, rph: 10000, tokensPerDay: null, concurrency: 8 });
    expect(cfg.tiers.vip).toMatchObject({ rpm: 1500, maxRpm: 3000, rph: 100000, concurrency: 32, maxConcurrency: 64 });
    expect(cfg.tiers.enterprise.concurrency).toBe(256);
    expect(cfg.models.get('kling-video')).toMatchObject({ rpm: 30, concurrency: 3, platformDailyRequests: 1000 });
    expect(cfg.models.get('bge-large-zh')).toMatchObject({ dimensions: 1024, inputPrice: 15_000n });
    expect(cfg.models.get('text-embedding-3-large')).toMatchObject({ dimensions: 3072, inputPrice: 130_000n });
    expect(cfg.cnyRateNano).toBe(7_200_000_000n);
  });

  it('email verification is off by default, and refused without SMTP_URL (no new account could ever pay)', () => {
    expect(buildConfig(valid(), 'test.yaml').requireEmailVerification).toBe(false);
    expect(loadConfigFile('config/gateway.example.yaml').requireEmailVerification).toBe(false);
    expect(errorOf({ ...valid(), auth: { require_email_verification: true } })).toMatch(/auth\.require_email_verification: needs SMTP_URL/);
    expect(errorOf({ ...valid(), auth: { require_email_verification: 'yes' } })).toMatch(/auth\.require_email_verification/);
  });

  it('reads built-in tool prices per call (a model’s own over the top-level ones) and the breaker’s account share', () => {
    const example = loadConfigFile('config/gateway.example.yaml');
    expect(example.models.get('claude-sonnet-4-5')!.toolPrices).toMatchObject({ web_search: 10_000_000_000n, code_interpreter: 30_000_000_000n });
    expect(example.circuitBreaker).toMatchObject({ autoDisableAfter: 20, autoDisableMinAccounts: 2 });
    const cfg = valid() as Record<string, unknown>;
    cfg.tool_prices_usd_per_thousand_calls = { web_search: '10', file_search: '2.5' };
    (cfg.models as Record<string, unknown>[])[0].tool_prices_usd_per_thousand_calls = { web_search: '25' };
    const built = buildConfig(cfg, 'test.yaml');
    expect(built.models.get('gpt-4o-mini')!.toolPrices).toEqual({ web_search: 25_000_000_000n, file_search: 2_500_000_000n });
    expect(built.models.get('gpt-4o')!.toolPrices).toEqual({ web_search: 10_000_000_000n, file_search: 2_500_000_000n });
    expect(buildConfig(valid(), 'test.yaml').circuitBreaker.autoDisableMinAccounts).toBe(2);
    cfg.tool_prices_usd_per_thousand_calls = { web_serch: '10' };
    expect(errorOf(cfg)).toMatch(/tool_prices_usd_per_thousand_calls/);
  });

  it('names the bad field of a channel', () => {
    const cfg = valid();
    (cfg.channels as { base_url: string }[])[0].base_url = 'not a url';
    expect(errorOf(cfg)).toMatch(/channels\[0\]\.base_url/);
  });

  it("reads a channel's concurrency and tpm and a model's tpm; a bad one names its field", () => {
    const cfg = valid();
    Object.assign((cfg.channels as Record<string, unknown>[])[0], { concurrency: 4, tpm: 200_000 });
    (cfg.models as { name: string; tpm?: number }[])[0].tpm = 1_000_000;
    const built = buildConfig(cfg, 'test.yaml');
    expect(built.channels[0]).toMatchObject({ concurrency: 4, tpm: 200_000 });
    expect(built.channels[1].concurrency).toBeUndefined();
    expect(built.models.get((cfg.models as { name: string }[])[0].name)!.tpm).toBe(1_000_000);
    (cfg.channels as Record<string, unknown>[])[0].concurrency = 0;
    expect(errorOf(cfg)).toMatch(/channels\[0\]\.concurrency/);
    (cfg.channels as Record<string, unknown>[])[0].concurrency = 4;
    (cfg.models as { tpm?: number }[])[0].tpm = 1.5;
    expect(errorOf(cfg)).toMatch(/models\[0\]\.tpm/);
  });

  it('rejects a float-unsafe price and names it', () => {
    const cfg = valid();
    (cfg.models as { input_price_usd_per_million: string }[])[1].input_price_usd_per_million = '-1';
    expect(errorOf(cfg)).toMatch(/models\[1\]\.input_price_usd_per_million/);
  });

  it('rejects a channel serving an unknown model', () => {
    const cfg = valid();
    (cfg.channels as { models: string[] }[])[0].models.push('no-such-model');
    expect(errorOf(cfg)).toMatch(/channels\[0\]\.models\[5\]: unknown model no-such-model/);
  });

  it('rejects an unknown field and a missing tier', () => {
    const cfg = valid() as Record<string, unknown>;
    cfg.colour = 'blue';
    delete (cfg.tiers as Record<string, unknown>).vip;
    const message = errorOf(cfg);
    expect(message).toMatch(/tiers\.vip/);
    expect(message).toMatch(/colour/);
  });

  it('requires dimensions for embedding models', () => {
    const cfg = valid();
    delete (cfg.models as { dimensions?: number }[])[5].dimensions;
    expect(errorOf(cfg)).toMatch(/models\[5\]\.dimensions: embedding models need dimensions/);
  });
});
