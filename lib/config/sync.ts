import { getDb } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { encryptSecret } from '@/lib/crypto';
import { formatPico } from '@/lib/billing/money';
import { Prisma } from '@/lib/generated/prisma/client';

// The operator config file is the source of truth; at start-up its tiers, channels and model
// catalogue are mirrored into the database (upstream keys encrypted) for reporting and the dashboard.
const usdPerMillion = (picoPerToken: bigint) => new Prisma.Decimal(formatPico(picoPerToken * 1_000_000n));

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
        dimensions: m.dimensions ?? null,
        tiers: [...m.tiers],
        rpm: m.rpm ?? null,
        concurrency: m.concurrency ?? null,
      };
      await tx.modelPrice.upsert({ where: { name: m.name }, create: { name: m.name, ...data }, update: data });
    }
  });
}
