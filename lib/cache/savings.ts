import { getConfig, type GatewayConfig } from '@/lib/config';
import { formatPico } from '@/lib/money';
import { getDb } from '@/lib/db';

// What the upstream's prompt cache saved: each cache-read token at the model's input price minus
// what it was billed (its cache-read price). Computed from the log's token counts at today's
// prices of the operator's catalogue (a model no longer listed saves nothing shown).

/** Pico-USD saved by `cacheReadTokens` on `model` (0 when the model is unknown or reads cost as much as input). */
export function cacheSavingPico(model: string | null, cacheReadTokens: number, cfg: GatewayConfig = getConfig()): bigint {
  const m = model ? cfg.models.get(model) : undefined;
  if (!m || cacheReadTokens <= 0 || m.inputPrice <= m.cacheReadPrice) return 0n;
  return BigInt(cacheReadTokens) * (m.inputPrice - m.cacheReadPrice);
}

/** The log detail's fields (GET /api/logs/{id}). */
export function cacheSavingJson(e: { modelServed: string | null; cacheReadTokens: number; routeReason: string | null }) {
  return {
    cache_saving_usd: formatPico(cacheSavingPico(e.modelServed, e.cacheReadTokens)),
    response_cache_hit: isResponseCacheHit(e.routeReason),
  };
}

/** A request answered from the response cache (lib/gateway/response-cache.ts) says so in its route reason. */
export function isResponseCacheHit(routeReason: string | null): boolean {
  return routeReason !== null && routeReason.includes('response cache hit');
}

export interface DaySaving {
  date: string;
  cacheReadTokens: number;
  savingPico: bigint;
}

/** Prompt-cache savings of one account per UTC day in [from, to] (inclusive days YYYY-MM-DD), days with cache reads only. */
export async function cacheSavingsByDay(userId: string, from: string, to: string): Promise<DaySaving[]> {
  const start = new Date(`${from}T00:00:00.000Z`);
  const end = new Date(new Date(`${to}T00:00:00.000Z`).getTime() + 86_400_000);
  const db = await getDb();
  const rows = await db.$queryRaw<{ day: string; model: string | null; tokens: bigint }[]>`
    SELECT to_char("createdAt", 'YYYY-MM-DD') AS day, "modelServed" AS model, SUM("cacheReadTokens")::bigint AS tokens
    FROM "RequestLog"
    WHERE "userId" = CAST(${userId} AS uuid) AND "createdAt" >= ${start} AND "createdAt" < ${end} AND "cacheReadTokens" > 0
    GROUP BY 1, 2 ORDER BY 1`;
  const cfg = getConfig();
  const byDay = new Map<string, DaySaving>();
  for (const r of rows) {
    const d = byDay.get(r.day) ?? { date: r.day, cacheReadTokens: 0, savingPico: 0n };
    d.cacheReadTokens += Number(r.tokens);
    d.savingPico += cacheSavingPico(r.model, Number(r.tokens), cfg);
    byDay.set(r.day, d);
  }
  return [...byDay.values()];
}

export function daySavingJson(d: DaySaving) {
  return { date: d.date, cache_read_tokens: d.cacheReadTokens, saving_usd: formatPico(d.savingPico) };
}
