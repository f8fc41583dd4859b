import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { env, envSecret } from '@/lib/env';
import { singleton } from '@/lib/singleton';
import { parseDecimal, usdToPico } from '@/lib/billing/money';
import { perCallPrice, type BuiltInTool, type ToolPrices } from '@/lib/billing/tools';
import type { ClassPrices, PriceModel } from '@/lib/billing/breakdown';
import { decryptSecret } from '@/lib/crypto';
import { configSchema, upstreamProtocols, type RawConfig, type TierName } from './schema';

export type { TierName } from './schema';
export { tierNames } from './schema';

export interface Timeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
}

export type UpstreamProtocolName = (typeof upstreamProtocols)[number];

export interface LogExportConfig {
  url: string;
  /** Never serialised to clients or logs. */
  secret: string;
  maxRows: number;
  maxSeconds: number;
  settleSeconds: number;
}

export interface ChannelInfo {
  name: string;
  protocol: UpstreamProtocolName;
  baseUrl: string;
  /** Never serialised to clients, logs or the dashboard. */
  apiKey: string;
  models: string[];
  priority: number;
  weight: number;
  timeouts: Timeouts;
  /** The upstream serves the OpenAI Responses API itself (POST {baseUrl}/responses). */
  responses?: boolean;
  /** What users are shown for it (lib/channels/labels.ts); unset: a generic name for its protocol. */
  label?: string;
  /** Where it runs (cn, eu, us…): requests restricted to a region use only its channels (lib/gateway/region.ts). */
  region?: string;
  /** Requests in flight at most, across instances (lib/gateway/admission/channel.ts). */
  concurrency?: number;
  /** Tokens per minute at most, across instances and accounts. */
  tpm?: number;
  /** Its health thresholds: the operator's channel_health defaults with its own overrides (unset: the defaults). */
  health?: HealthThresholds;
}

/** When a channel is degraded or failed, and how it comes back (lib/channels/health.ts). */
export interface HealthThresholds {
  windowMs: number;
  minRequests: number;
  degradedErrorRate: number;
  failedErrorRate: number;
  degradedLatencyMs: number;
  probeIntervalMs: number;
  recoverAfter: number;
  recoveringShare: number;
}

/** Prices are pico-USD per token: price per million USD times 10^6, exact for up to 6 decimals. */
export interface ModelInfo {
  name: string;
  ownedBy: string;
  kind: 'chat' | 'embedding' | 'video';
  /** The protocol of its (first) channel: informational, requests reach it from every surface. */
  protocol: UpstreamProtocolName;
  contextWindow: number;
  maxOutputTokens: number;
  tags: string[];
  inputPrice: bigint;
  outputPrice: bigint;
  cacheReadPrice: bigint;
  cacheWritePrice: bigint;
  inputUsdPerMillion: string;
  outputUsdPerMillion: string;
  dimensions?: number;
  tiers: Set<TierName>;
  rpm?: number;
  concurrency?: number;
  platformDailyRequests?: number;
  /** Platform-wide tokens per minute (every tier). */
  tpm?: number;
  fallbackModels: string[];
  latencyMs?: number;
  created: number;
  /** Pico-USD per call of the built-in tools priced for it (lib/billing/tools.ts). */
  toolPrices: ToolPrices;
  /** Video models: pico-USD per second of video, and the longest video a request may ask for. */
  videoPricePerSecond?: bigint;
  videoMaxSeconds?: number;
  /** The Batch API's discount on this model's prices (percent). */
  batchDiscountPercent?: number;
  /** The full price list (lib/billing/breakdown.ts, docs/decisions/035). */
  priceModel: PriceModel;
}

export interface TierInfo {
  name: TierName;
  rpm: number;
  rph: number;
  tokensPerDay: number | null;
  concurrency: number;
  maxRpm: number;
  maxConcurrency: number;
  promoteAtMonthlySpend: bigint | null;
}

export interface GatewayConfig {
  source: string;
  usdToCny: string;
  /** USD->CNY rate in units of 1e-9. */
  cnyRateNano: bigint;
  maintenance: boolean;
  /** Lower a request's output cap to what its key budget or balance pays for, instead of a 402. */
  clampOutputToBudget: boolean;
  /** The request-log export (lib/log-export/), when configured. */
  logExport?: LogExportConfig;
  startingBalance: bigint;
  /** New accounts must open a mailed link before they can redeem, recharge or buy a plan (docs/decisions/050). */
  requireEmailVerification: boolean;
  rechargeMin: bigint;
  rechargeMax: bigint;
  limits: RawConfig['limits'];
  /** Where state changes of channel health are POSTed, signed (unset: nowhere). */
  healthWebhook: { url: string; secret: string } | null;
  circuitBreaker: { failures: number; cooldownMs: number; autoDisableAfter?: number; autoDisableMinAccounts: number; probeIntervalMs: number };
  /** The response cache (lib/cache/response-cache.ts); `billedNano`: the share of the price a hit is billed, in billionths. */
  responseCache: { enabled: boolean; maxTtlSeconds: number; maxEntryBytes: number; memoryMaxBytes: number; billedNano: bigint; billedFraction: string };
  /** Cache-aware routing (lib/cache/affinity.ts). */
  cacheAffinity: { enabled: boolean; ttlSeconds: number };
  /** How long a stored response is kept (days). */
  responsesRetentionDays: number;
  /** Per-account quota of stored responses: bytes and rows (the oldest are evicted past either). */
  responsesQuota: { bytes: number; rows: number };
  tiers: Record<TierName, TierInfo>;
  /** Plans by id (lib/plans; docs/decisions/047), in the config's order. */
  plans: Map<string, PlanInfo>;
  /** Days a past-due subscription is still served. */
  planGraceDays: number;
  channels: ChannelInfo[];
  models: Map<string, ModelInfo>;
  /** Channels serving each model, ordered by priority (highest first). */
  channelsByModel: Map<string, ChannelInfo[]>;
  /** The job engine's caps, video storage and the Batch API (docs/decisions/037). */
  jobs: RawConfig['jobs'];
  videos: RawConfig['videos'];
  batches: RawConfig['batches'];
}

/** One window of a plan: its length and its cap, in the plan's unit (pico-USD, requests or tokens). */
export interface PlanWindow {
  name: string;
  ms: number;
  cap: bigint;
}

export interface PlanInfo {
  id: string;
  name: string;
  description?: string;
  priceMonthly: bigint;
  unit: 'usd' | 'requests' | 'tokens';
  windows: PlanWindow[];
  /** null: every model. */
  models: Set<string> | null;
  tier?: TierName;
  overflow: 'balance' | 'refuse';
  stripePriceId?: string;
  /** Where it is defined: the config file, or the console (a PlanOverride row; lib/plans/catalogue.ts). */
  source: 'config' | 'console';
  /** Not offered any more (console): its subscribers keep it until their period ends. */
  retired?: boolean;
}

export class ConfigError extends Error {}

const optPerToken = (v: string | undefined): bigint | undefined => (v === undefined ? undefined : perToken(v, 0n));

/** A model's price list as priceOf takes it: per-use prices are the built-in tool prices (per call). */
function priceModelOf(m: RawConfig['models'][number], tools: ToolPrices): PriceModel {
  const input = perToken(m.input_price_usd_per_million, 0n);
  const base: ClassPrices = {
    input,
    output: perToken(m.output_price_usd_per_million, 0n),
    cache_read: perToken(m.cache_read_price_usd_per_million, input),
    cache_write_5m: perToken(m.cache_write_price_usd_per_million, input),
    cache_write_1h: optPerToken(m.cache_write_1h_price_usd_per_million),
    reasoning: optPerToken(m.reasoning_price_usd_per_million),
    audio_input: optPerToken(m.audio_input_price_usd_per_million),
    audio_output: optPerToken(m.audio_output_price_usd_per_million),
    image_input: optPerToken(m.image_input_price_usd_per_million),
    image_output: optPerToken(m.image_output_price_usd_per_million),
    web_search: tools.web_search,
    code_execution: tools.code_execution ?? tools.code_interpreter,
  };
  for (const k of Object.keys(base) as (keyof ClassPrices)[]) if (base[k] === undefined) delete base[k];
  const lc = m.long_context;
  const longContext = lc && {
    threshold: lc.threshold_tokens,
    prices: Object.fromEntries(
      (
        [
          ['input', lc.input_price_usd_per_million],
          ['output', lc.output_price_usd_per_million],
          ['cache_read', lc.cache_read_price_usd_per_million],
          ['cache_write_5m', lc.cache_write_price_usd_per_million],
          ['cache_write_1h', lc.cache_write_1h_price_usd_per_million],
        ] as const
      )
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, perToken(v, 0n)]),
    ) as ClassPrices,
  };
  const st = m.service_tier_multipliers;
  // Multipliers to basis points, exactly enough for list multipliers (0.5, 1.8): two decimals.
  const bp = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 10_000));
  const serviceTiers = st && { batch: bp(st.batch), flex: bp(st.flex), priority: bp(st.priority) };
  return { base, longContext, serviceTiers };
}

export function planOf(p: RawConfig['plans'][number], source: 'config' | 'console' = 'config'): PlanInfo {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    priceMonthly: usdToPico(p.price_usd_monthly),
    unit: p.unit,
    windows: p.windows.map((w) => ({
      name: w.name,
      ms: (w.hours ?? 0) * 3_600_000 + (w.days ?? 0) * 86_400_000,
      cap: p.unit === 'usd' ? usdToPico(w.limit) : BigInt(w.limit),
    })),
    models: p.models.includes('*') ? null : new Set(p.models),
    tier: p.tier,
    overflow: p.overflow,
    stripePriceId: p.stripe_price_id,
    source,
  };
}

function perToken(pricePerMillion: string | undefined, fallback: bigint): bigint {
  // pico-USD per token = USD per million * 10^12 / 10^6
  return pricePerMillion === undefined ? fallback : parseDecimal(pricePerMillion, 6);
}

/** Pico-USD per call from USD per thousand calls (at most 9 decimals: exact). */
function toolPricesOf(raw: Partial<Record<BuiltInTool, string>>): ToolPrices {
  const prices: ToolPrices = {};
  for (const [tool, usd] of Object.entries(raw) as [BuiltInTool, string][]) prices[tool] = perCallPrice(usdToPico(usd));
  return prices;
}

function parseFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read operator config ${file}: ${(err as Error).message}`);
  }
  try {
    return file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new ConfigError(`operator config ${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`);
  }
}

function formatPath(p: PropertyKey[]): string {
  return p.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), '');
}

/** Validates a parsed config object; errors name the bad field, e.g. `channels[0].base_url: Invalid URL`. */
export function buildConfig(data: unknown, source = 'inline'): GatewayConfig {
  const parsed = configSchema.safeParse(data);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${formatPath(i.path) || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid operator config ${source}:\n${lines.join('\n')}`);
  }
  const raw = parsed.data;
  const created = Math.floor(Date.UTC(2026, 0, 1) / 1000);
  const models = new Map<string, ModelInfo>();
  for (const m of raw.models) {
    const inputPrice = perToken(m.input_price_usd_per_million, 0n);
    models.set(m.name, {
      name: m.name,
      ownedBy: m.owned_by,
      kind: m.kind,
      protocol: m.protocol ?? raw.channels.find((c) => c.models.includes(m.name))?.protocol ?? 'openai',
      contextWindow: m.context_window ?? 0,
      maxOutputTokens: m.max_output_tokens,
      tags: m.tags,
      inputPrice,
      outputPrice: perToken(m.output_price_usd_per_million, 0n),
      cacheReadPrice: perToken(m.cache_read_price_usd_per_million, inputPrice),
      cacheWritePrice: perToken(m.cache_write_price_usd_per_million, inputPrice),
      inputUsdPerMillion: m.input_price_usd_per_million,
      outputUsdPerMillion: m.output_price_usd_per_million,
      dimensions: m.dimensions,
      tiers: new Set(m.tiers),
      rpm: m.rpm,
      concurrency: m.concurrency,
      platformDailyRequests: m.platform_daily_requests,
      tpm: m.tpm,
      fallbackModels: m.fallback_models,
      latencyMs: m.latency_ms,
      created,
      toolPrices: toolPricesOf({ ...raw.tool_prices_usd_per_thousand_calls, ...m.tool_prices_usd_per_thousand_calls }),
      videoPricePerSecond: m.price_usd_per_second === undefined ? undefined : usdToPico(m.price_usd_per_second),
      videoMaxSeconds: m.max_seconds,
      batchDiscountPercent: m.batch_discount_percent ?? raw.batches.discount_percent,
      priceModel: priceModelOf(m, toolPricesOf({ ...raw.tool_prices_usd_per_thousand_calls, ...m.tool_prices_usd_per_thousand_calls })),
    });
  }
  const h = raw.channel_health;
  const healthOf = (o: Partial<typeof h> = {}): HealthThresholds => ({
    windowMs: o.window_ms ?? h.window_ms,
    minRequests: o.min_requests ?? h.min_requests,
    degradedErrorRate: o.degraded_error_rate ?? h.degraded_error_rate,
    failedErrorRate: o.failed_error_rate ?? h.failed_error_rate,
    degradedLatencyMs: o.degraded_latency_ms ?? h.degraded_latency_ms,
    probeIntervalMs: o.probe_interval_ms ?? h.probe_interval_ms,
    recoverAfter: o.recover_after ?? h.recover_after,
    recoveringShare: o.recovering_share ?? h.recovering_share,
  });
  let healthWebhook: GatewayConfig['healthWebhook'] = null;
  if (h.webhook_url) {
    const secret = envSecret(h.webhook_secret_env ?? '');
    if (!secret) throw new ConfigError(`invalid operator config ${source}:\n  channel_health.webhook_secret_env: variable ${h.webhook_secret_env} is not set`);
    healthWebhook = { url: h.webhook_url, secret };
  }
  const channels: ChannelInfo[] = raw.channels.map((c, i) => {
    const apiKey = c.api_key ?? (c.api_key_encrypted !== undefined ? decryptImported(c.api_key_encrypted, source, i) : envSecret(c.api_key_env ?? ''));
    if (!apiKey) throw new ConfigError(`invalid operator config ${source}:\n  channels[${i}].api_key_env: variable ${c.api_key_env} is not set`);
    return {
      name: c.name,
      protocol: c.protocol,
      baseUrl: c.base_url.replace(/\/+$/, ''),
      apiKey,
      models: c.models,
      priority: c.priority,
      weight: c.weight,
      timeouts: { connectMs: c.timeouts.connect_ms, firstByteMs: c.timeouts.first_byte_ms, idleMs: c.timeouts.idle_ms },
      responses: c.responses,
      label: c.label,
      region: c.region,
      concurrency: c.concurrency,
      tpm: c.tpm,
      health: healthOf(c.health),
    };
  });
  const channelsByModel = new Map<string, ChannelInfo[]>();
  for (const model of models.keys()) {
    channelsByModel.set(
      model,
      channels.filter((c) => c.models.includes(model)).sort((a, b) => b.priority - a.priority),
    );
  }
  const tiers = Object.fromEntries(
    (Object.keys(raw.tiers) as TierName[]).map((name) => {
      const t = raw.tiers[name];
      const info: TierInfo = {
        name,
        rpm: t.rpm,
        rph: t.rph,
        tokensPerDay: t.tokens_per_day,
        concurrency: t.concurrency,
        maxRpm: t.max_rpm ?? t.rpm,
        maxConcurrency: t.max_concurrency ?? t.concurrency,
        promoteAtMonthlySpend: t.promote_at_monthly_spend_usd === null ? null : usdToPico(t.promote_at_monthly_spend_usd),
      };
      return [name, info];
    }),
  ) as Record<TierName, TierInfo>;
  return {
    source,
    usdToCny: raw.usd_to_cny,
    cnyRateNano: parseDecimal(raw.usd_to_cny, 9),
    maintenance: raw.maintenance,
    startingBalance: usdToPico(raw.starting_balance_usd),
    requireEmailVerification: requireVerificationOf(raw, source),
    rechargeMin: usdToPico(raw.recharge.min_usd),
    rechargeMax: usdToPico(raw.recharge.max_usd),
    limits: raw.limits,
    healthWebhook,
    circuitBreaker: {
      failures: raw.circuit_breaker.failures,
      cooldownMs: raw.circuit_breaker.cooldown_ms,
      autoDisableAfter: raw.circuit_breaker.auto_disable_after,
      autoDisableMinAccounts: raw.circuit_breaker.auto_disable_min_accounts,
      probeIntervalMs: raw.circuit_breaker.probe_interval_ms,
    },
    responsesRetentionDays: raw.responses.retention_days,
    responsesQuota: { bytes: raw.responses.max_bytes_per_account, rows: raw.responses.max_per_account },
    clampOutputToBudget: raw.clamp_output_to_budget,
    responseCache: {
      enabled: raw.response_cache.enabled,
      maxTtlSeconds: raw.response_cache.max_ttl_seconds,
      maxEntryBytes: raw.response_cache.max_entry_bytes,
      memoryMaxBytes: raw.response_cache.memory_max_bytes,
      billedNano: parseDecimal(raw.response_cache.billed_fraction, 9),
      billedFraction: raw.response_cache.billed_fraction,
    },
    cacheAffinity: { enabled: raw.cache_affinity.enabled, ttlSeconds: raw.cache_affinity.ttl_seconds },
    logExport: logExportOf(raw, source),
    tiers,
    plans: new Map(raw.plans.map((p) => [p.id, planOf(p)])),
    planGraceDays: raw.plan_grace_days,
    channels,
    models,
    channelsByModel,
    jobs: raw.jobs,
    videos: raw.videos,
    batches: raw.batches,
  };
}

/** An imported channel's key (api_key_encrypted): a key that does not decrypt is a config error naming it. */
function decryptImported(stored: string, source: string, i: number): string {
  try {
    return decryptSecret(stored);
  } catch {
    throw new ConfigError(`invalid operator config ${source}:\n  channels[${i}].api_key_encrypted: does not decrypt with this SECRETS_KEY`);
  }
}

/** Verification without mail would lock every new account out of paying: refused at load instead. */
function requireVerificationOf(raw: RawConfig, source: string): boolean {
  const on = raw.auth.require_email_verification;
  if (on && !env.SMTP_URL) {
    throw new ConfigError(`invalid operator config ${source}:\n  auth.require_email_verification: needs SMTP_URL (the verification mail could not be sent)`);
  }
  return on;
}

function logExportOf(raw: RawConfig, source: string): LogExportConfig | undefined {
  const c = raw.log_export;
  if (!c) return undefined;
  const secret = c.secret ?? envSecret(c.secret_env ?? '');
  if (!secret) throw new ConfigError(`invalid operator config ${source}:\n  log_export.secret_env: variable ${c.secret_env} is not set`);
  return { url: c.url, secret, maxRows: c.max_rows, maxSeconds: c.max_seconds, settleSeconds: c.settle_seconds };
}

export function loadConfigFile(file: string): GatewayConfig {
  const resolved = path.resolve(file);
  return buildConfig(parseFile(resolved), file);
}

/** The operator config of this process, read once from GATEWAY_CONFIG. */
export function getConfig(): GatewayConfig {
  return singleton('config', () => loadConfigFile(env.GATEWAY_CONFIG));
}
