import { getDb } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { usdToCny, usdToPico } from '@/lib/money';
import { failedSql } from '@/lib/billing/failed';
import { fleetBreakers, listChannelOverrides } from '@/lib/channels/overrides';
import { healthSnapshot, type ChannelHealthView } from '@/lib/channels/health';
import { channelKey } from '@/lib/limits/keys';
import { getLimiter } from '@/lib/limits/runtime';
import type { UsageRule } from '@/lib/limits/types';

// Figures for the operator console, across every account. Sums are done by PostgreSQL in numeric
// and parsed exactly from text: no float touches money.

const pico = (text: string | null) => usdToPico(text ?? '0');

export interface WindowTotals {
  label: string;
  requests: number;
  /** Failed requests, as the dashboard counts them (lib/billing/failed.ts). */
  failed: number;
  spendPico: bigint;
  spendCnyPico: bigint;
  revenuePico: bigint;
  revenueCnyPico: bigint;
}

const DAY = 86_400_000;

function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

async function totalsSince(label: string, from: Date): Promise<WindowTotals> {
  const db = await getDb();
  const [usage] = await db.$queryRaw<{ requests: bigint; failed: bigint; spend: string | null; spend_cny: string | null }[]>`
    SELECT COUNT(*) AS requests, COUNT(*) FILTER (WHERE ${failedSql}) AS failed,
           SUM("costUsd")::text AS spend, SUM("costCny")::text AS spend_cny
    FROM "RequestLog" WHERE "createdAt" >= ${from}`;
  const [revenue] = await db.$queryRaw<{ revenue: string | null }[]>`
    SELECT SUM("amountUsd")::text AS revenue FROM "LedgerEntry"
    WHERE kind = 'recharge' AND "amountUsd" > 0 AND "createdAt" >= ${from}`;
  const revenuePico = pico(revenue.revenue);
  return {
    label,
    requests: Number(usage.requests),
    failed: Number(usage.failed),
    spendPico: pico(usage.spend),
    spendCnyPico: pico(usage.spend_cny),
    revenuePico,
    // Recharges are in USD; shown in CNY at today's configured rate.
    revenueCnyPico: usdToCny(revenuePico, getConfig().cnyRateNano),
  };
}

export interface Breakdown {
  key: string;
  requests: number;
  spendPico: bigint;
}

async function breakdown(column: 'modelServed' | 'channel' | 'tier', from: Date): Promise<Breakdown[]> {
  const db = await getDb();
  const rows =
    column === 'tier'
      ? await db.$queryRaw<{ key: string | null; requests: bigint; spend: string | null }[]>`
          SELECT u.tier::text AS key, COUNT(*) AS requests, SUM(r."costUsd")::text AS spend
          FROM "RequestLog" r JOIN "User" u ON u.id = r."userId" WHERE r."createdAt" >= ${from}
          GROUP BY u.tier ORDER BY SUM(r."costUsd") DESC NULLS LAST`
      : column === 'channel'
        ? await db.$queryRaw<{ key: string | null; requests: bigint; spend: string | null }[]>`
          SELECT channel AS key, COUNT(*) AS requests, SUM("costUsd")::text AS spend
          FROM "RequestLog" WHERE "createdAt" >= ${from} GROUP BY channel ORDER BY SUM("costUsd") DESC NULLS LAST LIMIT 20`
        : await db.$queryRaw<{ key: string | null; requests: bigint; spend: string | null }[]>`
          SELECT "modelServed" AS key, COUNT(*) AS requests, SUM("costUsd")::text AS spend
          FROM "RequestLog" WHERE "createdAt" >= ${from} GROUP BY "modelServed" ORDER BY SUM("costUsd") DESC NULLS LAST LIMIT 20`;
  return rows.map((r) => ({ key: r.key ?? '(none)', requests: Number(r.requests), spendPico: pico(r.spend) }));
}

export interface TopAccount {
  userId: string;
  email: string;
  requests: number;
  spendPico: bigint;
}

async function topAccounts(from: Date, limit = 10): Promise<TopAccount[]> {
  const db = await getDb();
  const rows = await db.$queryRaw<{ user_id: string; email: string; requests: bigint; spend: string | null }[]>`
    SELECT r."userId"::text AS user_id, u.email, COUNT(*) AS requests, SUM(r."costUsd")::text AS spend
    FROM "RequestLog" r JOIN "User" u ON u.id = r."userId" WHERE r."createdAt" >= ${from}
    GROUP BY r."userId", u.email ORDER BY SUM(r."costUsd") DESC NULLS LAST LIMIT ${limit}`;
  return rows.map((r) => ({ userId: r.user_id, email: r.email, requests: Number(r.requests), spendPico: pico(r.spend) }));
}

export async function overview(now = new Date()) {
  const from30 = new Date(now.getTime() - 30 * DAY);
  const [today, week, month, byModel, byChannel, byTier, top, channels] = await Promise.all([
    totalsSince('Today', startOfUtcDay(now)),
    totalsSince('7 days', new Date(now.getTime() - 7 * DAY)),
    totalsSince('30 days', from30),
    breakdown('modelServed', from30),
    breakdown('channel', from30),
    breakdown('tier', from30),
    topAccounts(from30),
    channelStates(),
  ]);
  return { windows: [today, week, month], byModel, byChannel, byTier, top, channels };
}

export interface ChannelState {
  name: string;
  protocol: string;
  host: string;
  /** The upstream key's last four characters at most; never more. */
  keyHint: string;
  models: string[];
  priority: number;
  weight: number;
  weightOverride: number | null;
  disabled: boolean;
  disabledReason: string | null;
  updatedBy: string | null;
  /** Instances reporting, and how many of them have the breaker open / are counting failures. */
  instances: number;
  breakerOpen: number;
  consecutiveFailures: number;
  /** Last 5 minutes, from the request log (every instance). */
  requests5m: number;
  errors5m: number;
  errorRate: number;
  p50Ms: number | null;
  p99Ms: number | null;
  rpm: number;
  /** Channel health across instances (lib/channels/health.ts): state, why and since when, recent error samples. */
  health: ChannelHealthView;
  /** The channel's own limits (docs/decisions/030, 044) and what they hold now, across instances. */
  limits: { concurrency: ChannelLimit; tpm: ChannelLimit };
}

/**
 * One limit of a channel: the one enforced (the console's override, else the operator config's;
 * null: none), both sources, and what it holds now (requests in flight; tokens reserved or used in
 * the last minute). `current` is null without a limit: nothing counts a channel without one.
 */
export interface ChannelLimit {
  limit: number | null;
  config: number | null;
  override: number | null;
  current: number | null;
}

/** The window of a channel's tokens-per-minute rule (lib/gateway/admission/channel.ts). */
const TPM_WINDOW_MS = 60_000;

function channelLimit(limit: number | null, config: number | undefined, override: number | undefined, current: number | undefined): ChannelLimit {
  return { limit, config: config ?? null, override: override ?? null, current: limit === null ? null : (current ?? 0) };
}

/** What each limited channel's rules hold now (channel -> in flight, tokens this minute): one read-only limiter call for all. */
async function channelUsage(
  limited: { name: string; concurrency: number | null; tpm: number | null }[],
): Promise<Map<string, { concurrency?: number; tpm?: number }>> {
  const rules: (UsageRule & { channel: string; limit: 'concurrency' | 'tpm' })[] = [];
  for (const c of limited) {
    if (c.concurrency !== null) rules.push({ kind: 'concurrency', key: channelKey(c.name, 'conc'), channel: c.name, limit: 'concurrency' });
    if (c.tpm !== null) rules.push({ kind: 'tokens', key: channelKey(c.name, 'tpm'), windowMs: TPM_WINDOW_MS, channel: c.name, limit: 'tpm' });
  }
  const values = rules.length ? await getLimiter().usage(rules) : [];
  const out = new Map<string, { concurrency?: number; tpm?: number }>();
  rules.forEach((r, i) => out.set(r.channel, { ...out.get(r.channel), [r.limit]: values[i] }));
  return out;
}

/** Every configured channel with its runtime state across instances. Never exposes the key. */
export async function channelStates(): Promise<ChannelState[]> {
  const cfg = getConfig();
  const db = await getDb();
  const since = new Date(Date.now() - 5 * 60_000);
  const [overrides, fleet, rows] = await Promise.all([
    listChannelOverrides(),
    fleetBreakers(),
    db.$queryRaw<{ channel: string; requests: bigint; errors: bigint; p50: number | null; p99: number | null }[]>`
      SELECT channel, COUNT(*) AS requests, COUNT(*) FILTER (WHERE status >= 500) AS errors,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY "latencyMs") AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY "latencyMs") AS p99
      FROM "RequestLog" WHERE "createdAt" >= ${since} AND channel IS NOT NULL GROUP BY channel`,
  ]);
  const stats = new Map(rows.map((r) => [r.channel, r]));
  const health = healthSnapshot();
  const limits = cfg.channels.map((c) => {
    const o = overrides.get(c.name);
    return { name: c.name, concurrency: o?.concurrency ?? c.concurrency ?? null, tpm: o?.tpm ?? c.tpm ?? null };
  });
  const usage = await channelUsage(limits);
  return cfg.channels.map((c, i) => {
    const o = overrides.get(c.name);
    const l = limits[i];
    const now = usage.get(c.name);
    const s = stats.get(c.name);
    const breakers = fleet.byChannel.get(c.name) ?? [];
    const requests = Number(s?.requests ?? 0);
    const errors = Number(s?.errors ?? 0);
    let host = '';
    try {
      host = new URL(c.baseUrl).host;
    } catch {
      host = '(invalid URL)';
    }
    return {
      name: c.name,
      protocol: c.protocol,
      host,
      keyHint: c.apiKey.length >= 12 ? `…${c.apiKey.slice(-4)}` : '…',
      models: c.models,
      priority: c.priority,
      weight: c.weight,
      weightOverride: o?.weight ?? null,
      disabled: o?.disabled ?? false,
      disabledReason: o?.disabled ? (o.reason ?? 'manual') : null,
      updatedBy: o?.updatedBy ?? null,
      instances: fleet.instances,
      breakerOpen: breakers.filter((b) => b.open).length,
      consecutiveFailures: Math.max(0, ...breakers.map((b) => b.failures)),
      requests5m: requests,
      errors5m: errors,
      errorRate: requests ? errors / requests : 0,
      p50Ms: s?.p50 == null ? null : Math.round(Number(s.p50)),
      p99Ms: s?.p99 == null ? null : Math.round(Number(s.p99)),
      rpm: Math.round((requests / 5) * 10) / 10,
      health: health.get(c.name)!,
      limits: {
        concurrency: channelLimit(l.concurrency, c.concurrency, o?.concurrency, now?.concurrency),
        tpm: channelLimit(l.tpm, c.tpm, o?.tpm, now?.tpm),
      },
    };
  });
}
