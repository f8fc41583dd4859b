import { getDb } from '@/lib/db';
import { getConfig, type ModelInfo } from '@/lib/config';
import { encryptSecret } from '@/lib/crypto';
import { formatPico } from '@/lib/money';
import { Prisma } from '@/lib/generated/prisma/client';

// The operator config file is the source of truth; at start-up its tiers, channels and model
// catalogue are mirrored into the database (upstream keys encrypted) for reporting and the dashboard.
const usdPerMillion = (picoPerToken: bigint) => new Prisma.Decimal(formatPico(picoPerToken * 1_000_000n));
const optPerMillion = (picoPerToken: bigint | undefined) => (picoPerToken === undefined ? null : usdPerMillion(picoPerToken));
const perMillionText = (picoPerToken: bigint) => formatPico(picoPerToken * 1_000_000n);

/** The config's names of the long-context prices (`cache_write_price_…` is the 5-minute write). */
const LONG_CONTEXT_KEYS: Record<string, string> = { cache_write_5m: 'cache_write_price_usd_per_million' };

/**
 * The rest of a model's price list (docs/decisions/035), as the config writes it: the other token
 * classes per million, the long-context tier (the config's keys), the service-tier multipliers,
 * the per-call tool prices (per thousand calls) and the Batch API discount.
 */
export function priceListMirror(m: ModelInfo) {
  const { base, longContext, serviceTiers } = m.priceModel;
  const tiers = Object.entries(serviceTiers ?? {}).filter(([, bp]) => bp !== undefined);
  const perUse = Object.entries(m.toolPrices).filter(([, p]) => p !== undefined);
  return {
    cacheWrite1hUsdPerM: optPerMillion(base.cache_write_1h),
    reasoningUsdPerM: optPerMillion(base.reasoning),
    audioInputUsdPerM: optPerMillion(base.audio_input),
    audioOutputUsdPerM: optPerMillion(base.audio_output),
    imageInputUsdPerM: optPerMillion(base.image_input),
    imageOutputUsdPerM: optPerMillion(base.image_output),
    longContext: longContext
      ? {
          threshold_tokens: longContext.threshold,
          ...Object.fromEntries(Object.entries(longContext.prices).map(([k, v]) => [LONG_CONTEXT_KEYS[k] ?? `${k}_price_usd_per_million`, perMillionText(v)])),
        }
      : Prisma.DbNull,
    // Basis points back to the multiplier the config wrote (5000 -> "0.5").
    serviceTierMultipliers: tiers.length ? Object.fromEntries(tiers.map(([k, bp]) => [k, formatPico(BigInt(bp!) * 100_000_000n)])) : Prisma.DbNull,
    toolUsdPerThousandCalls: perUse.length ? Object.fromEntries(perUse.map(([k, p]) => [k, formatPico(p! * 1000n)])) : Prisma.DbNull,
    batchDiscountPercent: m.batchDiscountPercent === undefined ? null : new Prisma.Decimal(m.batchDiscountPercent),
  };
}

export async function syncCatalogue(): Promise<void> {
  const cfg = getConfig();
  const db = await getDb();
  await db.$transaction(async (tx) => {
    for (const t of Object.values(cfg.tiers)) {
      const data = {
        rpm: t.rpm,
        rph: t.rph,
        tokensPerDay: t.tokensPerDay === null ? null : BigInt(t.tokensPerDay),
        concurrency: t.concurrency,
        promoteAtUsd: t.promoteAtMonthlySpend === null ? null : new Prisma.Decimal(formatPico(t.promoteAtMonthlySpend)),
      };
      await tx.tierConfig.upsert({ where: { name: t.name }, create: { name: t.name, ...data }, update: data });
    }
    await tx.channel.deleteMany({ where: { id: { notIn: cfg.channels.map((c) => c.name) } } });
    for (const c of cfg.channels) {
      const data = {
        protocol: c.protocol,
        baseUrl: c.baseUrl,
        secretEncrypted: encryptSecret(c.apiKey),
        priority: c.priority,
        weight: c.weight,
        models: c.models,
      };
      await tx.channel.upsert({ where: { id: c.name }, create: { id: c.name, ...data }, update: data });
    }
    await tx.modelPrice.deleteMany({ where: { name: { notIn: [...cfg.models.keys()] } } });
    for (const m of cfg.models.values()) {
      const data = {
        ownedBy: m.ownedBy,
        kind: m.kind,
        protocol: m.protocol,
        contextWindow: m.contextWindow,
        maxOutputTokens: m.maxOutputTokens,
        tags: m.tags,
        inputUsdPerM: usdPerMillion(m.inputPrice),
        outputUsdPerM: usdPerMillion(m.outputPrice),
        cacheReadUsdPerM: usdPerMillion(m.cacheReadPrice),
        cacheWriteUsdPerM: usdPerMillion(m.cacheWritePrice),
        ...priceListMirror(m),
        dimensions: m.dimensions ?? null,
        tiers: [...m.tiers],
        rpm: m.rpm ?? null,
        concurrency: m.concurrency ?? null,
      };
      await tx.modelPrice.upsert({ where: { name: m.name }, create: { name: m.name, ...data }, update: data });
    }
  });
}
