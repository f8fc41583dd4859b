import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { buildConfig, ConfigError, loadConfigFile } from '@/lib/config';
import { priceListMirror } from '@/lib/config/sync';
import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { priceOf } from '@/lib/pricing/breakdown';
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

describe('the catalogue mirror (ModelPrice) carries the whole price list (docs/decisions/043)', () => {
  const file = 'config/gateway.example.yaml';
  const raw = YAML.parse(readFileSync(file, 'utf8')) as { models: Record<string, unknown>[]; tool_prices_usd_per_thousand_calls: Record<string, string> };
  const cfg = loadConfigFile(file);
  const rawModel = (name: string) => raw.models.find((m) => m.name === name)!;
  const text = (d: { toFixed(n: number): string } | null) => (d === null ? null : d.toFixed(12).replace(/\.?0+$/, ''));

  it('mirrors what the config writes: 1h writes, the long-context tier, multipliers, tool prices, in its own terms', () => {
    const sonnet = priceListMirror(cfg.models.get('claude-sonnet-4-5')!);
    const r = rawModel('claude-sonnet-4-5');
    expect(text(sonnet.cacheWrite1hUsdPerM)).toBe(r.cache_write_1h_price_usd_per_million);
    expect(sonnet.longContext).toEqual(r.long_context);
    expect(sonnet.serviceTierMultipliers).toEqual({ batch: '0.5' });
    expect(sonnet.toolUsdPerThousandCalls).toEqual(raw.tool_prices_usd_per_thousand_calls);
    expect(sonnet.reasoningUsdPerM).toBeNull();
    const gpt4o = priceListMirror(cfg.models.get('gpt-4o')!);
    expect(gpt4o.serviceTierMultipliers).toEqual({ batch: '0.5', priority: '1.7' });
    expect(gpt4o.longContext).toBe(Prisma.DbNull);
    expect(text(priceListMirror(cfg.models.get('gemini-2.5-flash')!).audioInputUsdPerM)).toBe(rawModel('gemini-2.5-flash').audio_input_price_usd_per_million);
  });

  it('is stored as it is mirrored', async () => {
    const db = await getDb();
    const name = `mirror-${Date.now()}`;
    const base = { ownedBy: 'x', kind: 'chat', protocol: 'anthropic', contextWindow: 1, maxOutputTokens: 1, tags: [], tiers: [] };
    const money = { inputUsdPerM: new Prisma.Decimal(3), outputUsdPerM: new Prisma.Decimal(15) };
    await db.modelPrice.create({ data: { name, ...base, ...money, ...priceListMirror(cfg.models.get('claude-sonnet-4-5')!) } });
    const row = await db.modelPrice.findUniqueOrThrow({ where: { name } });
    await db.modelPrice.delete({ where: { name } });
    expect(text(row.cacheWrite1hUsdPerM)).toBe('6');
    expect(row.longContext).toEqual(rawModel('claude-sonnet-4-5').long_context);
    expect(text(row.batchDiscountPercent)).toBe('50');
  });
});
