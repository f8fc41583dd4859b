import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError } from '@/lib/config';
import { priceOf } from '@/lib/billing/breakdown';
import { testConfig } from '../support/gateway';

const valid = () => testConfig({ openaiUrls: ['http://127.0.0.1:1'], anthropicUrls: ['http://127.0.0.1:2'] }) as Record<string, unknown>;
const first = (cfg: Record<string, unknown>) => (cfg.models as Record<string, unknown>[])[0];

describe('price model in the operator config (docs/decisions/035)', () => {
  it('keeps old configs working: the four classic prices become the base price list', () => {
    const cfg = valid();
    const name = first(cfg).name as string;
    const m = buildConfig(cfg, 'test.yaml').models.get(name)!;
    expect(m.priceModel.base.input).toBe(m.inputPrice);
    expect(m.priceModel.base.output).toBe(m.outputPrice);
    expect(m.priceModel.base.cache_read).toBe(m.cacheReadPrice);
    expect(m.priceModel.base.cache_write_5m).toBe(m.cacheWritePrice);
    expect(m.priceModel.base.cache_write_1h).toBeUndefined();
    expect(m.priceModel.longContext).toBeUndefined();
  });

  it('reads 1h cache writes, long-context tiers, service-tier multipliers and per-use prices', () => {
    const cfg = valid();
    cfg.tool_prices_usd_per_thousand_calls = { web_search: '10' };
    Object.assign(first(cfg), {
      input_price_usd_per_million: '3',
      output_price_usd_per_million: '15',
      cache_write_1h_price_usd_per_million: '6',
      audio_input_price_usd_per_million: '40',
      long_context: { threshold_tokens: 200000, input_price_usd_per_million: '6', output_price_usd_per_million: '22.5' },
      service_tier_multipliers: { batch: 0.5, priority: 1.8 },
    });
    const m = buildConfig(cfg, 'test.yaml').models.get(first(cfg).name as string)!;
    expect(m.priceModel.base).toMatchObject({ cache_write_1h: 6_000_000n, audio_input: 40_000_000n, web_search: 10_000_000_000n });
    expect(m.priceModel.serviceTiers).toMatchObject({ batch: 5_000, priority: 18_000 });
    const b = priceOf(m.priceModel, { input: 250_000, output: 1000, web_search: 1 }, 'batch');
    expect(b.tier).toBe('long_context');
    expect(b.costUsd).toBe((250_000n * 6_000_000n + 1000n * 22_500_000n + 10_000_000_000n) / 2n);
  });

  it('refuses a bad price field at start, naming it', () => {
    const cfg = valid();
    Object.assign(first(cfg), { long_context: { input_price_usd_per_million: '6' }, service_tier_multipliers: { turbo: 2 } });
    let message = '';
    try {
      buildConfig(cfg, 'test.yaml');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/models\[0\]\.long_context\.threshold_tokens/);
    expect(message).toMatch(/models\[0\]\.service_tier_multipliers/);
  });
});
