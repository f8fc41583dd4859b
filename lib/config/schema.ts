import { z } from 'zod';
import { BUILT_IN_TOOLS } from '@/lib/billing/tools';

// The operator configuration file (YAML or JSON, path in GATEWAY_CONFIG).
// Money is written as decimal numbers or strings and parsed exactly (never through a float).

const decimal = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .refine((v) => /^\d+(\.\d{1,9})?$/.test(v), { message: 'must be a non-negative decimal with at most 9 decimals' });

const positiveInt = z.number().int().positive();

/**
 * USD per thousand calls of each built-in tool an upstream bills per call (lib/billing/tools.ts):
 * a request using a tool without a price for its model is refused (400 naming the tool).
 */
const toolPricesSchema = z.partialRecord(z.enum(BUILT_IN_TOOLS), decimal);

const longContextSchema = z
  .object({
    threshold_tokens: positiveInt,
    input_price_usd_per_million: decimal.optional(),
    output_price_usd_per_million: decimal.optional(),
    cache_read_price_usd_per_million: decimal.optional(),
    cache_write_price_usd_per_million: decimal.optional(),
    cache_write_1h_price_usd_per_million: decimal.optional(),
  })
  .strict();

const multiplier = z.number().min(0).max(10);
const serviceTierSchema = z.object({ batch: multiplier.optional(), flex: multiplier.optional(), priority: multiplier.optional() }).strict();

export const tierNames = ['free', 'pro', 'vip', 'enterprise'] as const;
export type TierName = (typeof tierNames)[number];

const tierSchema = z
  .object({
    rpm: positiveInt,
    rph: positiveInt,
    /** null = unlimited */
    tokens_per_day: positiveInt.nullable().default(null),
    concurrency: positiveInt,
    /** Upper bounds an operator may grant a single account of this tier (VIP: 3000 rpm, 64 concurrent). */
    max_rpm: positiveInt.optional(),
    max_concurrency: positiveInt.optional(),
    /** Monthly spend (USD) that promotes an account to this tier automatically; null = never automatic. */
    promote_at_monthly_spend_usd: decimal.nullable().default(null),
  })
  .strict();

/** The protocols an upstream channel may speak. */
/**
 * A plan (issue 42; docs/decisions/047): a monthly price and an allowance in stacked windows, each
 * anchored at the subscription's start. `unit` is what every window of the plan counts: USD of usage
 * at list prices, requests, or tokens (input + output).
 */
const planWindowSchema = z
  .object({
    /** Shown to users and in the 429: "5h", "weekly". */
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, { message: 'must be lower-case letters, digits, - or _ (at most 32)' }),
    hours: positiveInt.optional(),
    days: positiveInt.optional(),
    /** USD (a decimal) for unit usd; a whole number for requests and tokens. */
    limit: decimal,
  })
  .strict()
  .refine((w) => (w.hours === undefined) !== (w.days === undefined), { message: 'give the window exactly one of hours or days' });

export const planSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, { message: 'must be lower-case letters, digits, - or _ (at most 64)' }),
    name: z.string().min(1).max(80),
    price_usd_monthly: decimal,
    unit: z.enum(['usd', 'requests', 'tokens']).default('usd'),
    windows: z.array(planWindowSchema).min(1).max(6),
    /** Models it pays for; ["*"] for every model. Others bill the balance. */
    models: z.array(z.string()).min(1),
    /** The tier the account has while the plan is active (its limits); unset: the account's own. */
    tier: z.enum(['free', 'pro', 'vip', 'enterprise']).optional(),
    /** Past a window's cap: bill the balance ('balance') or refuse with a 429 naming the window ('refuse'). */
    overflow: z.enum(['balance', 'refuse']).default('balance'),
    /** The Stripe Price (recurring, monthly) Checkout subscribes to; unset: granted by code or operator only. */
    stripe_price_id: z.string().optional(),
    description: z.string().max(300).optional(),
  })
  .strict();

export const upstreamProtocols = ['openai', 'anthropic', 'gemini'] as const;

const timeoutsSchema = z
  .object({
    connect_ms: positiveInt.default(5_000),
    first_byte_ms: positiveInt.default(60_000),
    idle_ms: positiveInt.default(60_000),
  })
  .strict();

/**
 * Channel health thresholds (lib/channels/health.ts): the operator's defaults under
 * `channel_health`, any of them overridden per channel under the channel's `health`.
 */
const healthThresholdsShape = {
  /** The sliding window the error rate and latency are computed over. */
  window_ms: positiveInt.min(1000).max(3_600_000),
  /** Counted attempts a window needs before its rate can change a state (one error is never enough). */
  min_requests: positiveInt.max(100_000),
  /** Error rate (0–1) at which a healthy channel is degraded. */
  degraded_error_rate: z.number().gt(0).max(1),
  /** Error rate (0–1) at which a channel has failed: it is left out of routing and probed. */
  failed_error_rate: z.number().gt(0).max(1),
  /** Mean time to the upstream's answer (ms) at which a healthy channel is degraded. */
  degraded_latency_ms: positiveInt,
  /** How often a failed or recovering channel is probed. */
  probe_interval_ms: positiveInt.min(100),
  /** Consecutive passing probes that bring a failed channel back to healthy (the first makes it recovering). */
  recover_after: positiveInt.max(100),
  /** Share (0–1) of requests that try a recovering channel first, before it is healthy again. */
  recovering_share: z.number().min(0).max(1),
};
const healthOverrideSchema = z.object(healthThresholdsShape).partial().strict();

const channelSchema = z
  .object({
    name: z.string().regex(/^[a-zA-Z0-9._-]+$/, 'letters, digits, dot, dash and underscore only'),
    /** What users see in their logs and playground ("Acme Cloud"); unset: a generic name for the protocol. The name is the operator's alone. */
    label: z.string().trim().min(1).max(60).optional(),
    /** Where the upstream runs (free text: cn, eu, us): a request or account pinned to a region is served only by channels of it. */
    region: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'a region name: lower-case letters, digits and dashes (cn, eu, us-east)')
      .optional(),
    /** What the upstream speaks: every surface reaches it through a translator. */
    protocol: z.enum(upstreamProtocols),
    base_url: z.string().url(),
    /** The upstream key, inline (discouraged) or by environment variable name. */
    api_key: z.string().min(1).optional(),
    api_key_env: z.string().min(1).optional(),
    /** The upstream key encrypted with SECRETS_KEY (lib/crypto.ts), as `admin import` writes imported channels. */
    api_key_encrypted: z.string().regex(/^v1\./, 'an encrypted key as admin import writes it (v1.…)').optional(),
    models: z.array(z.string().min(1)).min(1),
    priority: z.number().int().default(0),
    weight: positiveInt.default(1),
    timeouts: timeoutsSchema.default({ connect_ms: 5_000, first_byte_ms: 60_000, idle_ms: 60_000 }),
    /**
     * An OpenAI channel whose upstream serves POST {base_url}/responses itself: /v1/responses
     * requests are passed to it as they came (built-in tools such as web_search included).
     */
    responses: z.boolean().default(false),
    /** At most this many requests in flight on the channel across all instances; at the cap, routing falls back to the next channel. */
    concurrency: positiveInt.optional(),
    /** Tokens per minute on the channel (input + output, reserved at admission and settled after), across all instances and accounts. */
    tpm: positiveInt.optional(),
    /** This channel's own health thresholds (any of channel_health's). */
    health: healthOverrideSchema.optional(),
  })
  .strict()
  .refine((c) => c.api_key !== undefined || c.api_key_env !== undefined || c.api_key_encrypted !== undefined, {
    message: 'needs api_key, api_key_env or api_key_encrypted',
    path: ['api_key'],
  })
  .refine((c) => !c.responses || c.protocol === 'openai', {
    message: 'responses: true needs an openai channel (the Responses API is an OpenAI protocol)',
    path: ['responses'],
  });

/**
 * Request-log export to a webhook (lib/log-export/): signed batches of log rows. https, or http to
 * a loopback host (a receiver on the same machine, tests); the secret is a Standard Webhooks one.
 */
const logExportSchema = z
  .object({
    url: z
      .string()
      .url()
      .refine((u) => {
        const url = new URL(u);
        if (url.username || url.password) return false;
        if (url.protocol === 'https:') return true;
        const host = url.hostname.replace(/^\[|\]$/g, '');
        return url.protocol === 'http:' && (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host));
      }, 'must be https (http only to localhost), without credentials'),
    /** The signing secret inline (whsec_…) or by environment variable name. */
    secret: z.string().min(16).optional(),
    secret_env: z.string().min(1).optional(),
    /** At most this many rows per batch. */
    max_rows: positiveInt.max(10_000).default(500),
    /** A batch leaves at most this many seconds after its first row could (a partial batch then). */
    max_seconds: positiveInt.max(3600).default(10),
    /** Rows younger than this are not sent yet: the batched log writer may still be storing older ones. */
    settle_seconds: z.number().int().min(0).max(3600).default(15),
  })
  .strict()
  .refine((c) => c.secret !== undefined || c.secret_env !== undefined, { message: 'needs secret or secret_env', path: ['secret'] });

/** The job engine, video storage and the Batch API (lib/jobs, lib/videos, lib/batches; docs/decisions/037). */
const jobsConfigShape = {
  jobs: z
    .object({
      /** Jobs of one account running at once, across every instance. */
      account_concurrency: positiveInt.max(10_000).default(4),
      /** Jobs running at once across the platform. */
      platform_concurrency: positiveInt.max(100_000).default(64),
    })
    .strict()
    .default({ account_concurrency: 4, platform_concurrency: 64 }),
  videos: z
    .object({
      /** Generated videos are kept this many days, then deleted with their job. */
      retention_days: positiveInt.max(3650).default(7),
      /** Where video files are kept: a directory under DATA_DIR (default) or an S3-compatible bucket. */
      storage: z
        .discriminatedUnion('type', [
          z.object({ type: z.literal('local'), dir: z.string().min(1).default('videos') }).strict(),
          z
            .object({
              type: z.literal('s3'),
              bucket: z.string().min(1),
              region: z.string().min(1).default('us-east-1'),
              /** An S3-compatible endpoint (MinIO, R2, OSS); unset: AWS. */
              endpoint: z.string().url().optional(),
              prefix: z.string().default('videos/'),
              force_path_style: z.boolean().default(false),
              /** Credentials by environment variable name; unset: the AWS SDK's default chain. */
              access_key_id_env: z.string().min(1).optional(),
              secret_access_key_env: z.string().min(1).optional(),
            })
            .strict(),
        ])
        .default({ type: 'local', dir: 'videos' }),
    })
    .strict()
    .default({ retention_days: 7, storage: { type: 'local', dir: 'videos' } }),
  batches: z
    .object({
      /** Discount of batch lines on the model's prices, in percent (a model's batch_discount_percent overrides it). */
      discount_percent: z.number().min(0).max(100).default(50),
      /** Largest batch input file (bytes). */
      max_file_bytes: positiveInt.max(512 * 1024 * 1024).default(50 * 1024 * 1024),
      /** Lines of one batch in flight at once on an instance (its own limit: live traffic is never starved). */
      concurrency: positiveInt.max(256).default(4),
      /** Lines per batch, at most. */
      max_lines: positiveInt.max(50_000).default(50_000),
      /** Batch files (inputs, outputs, errors) are kept this many days from their creation, then deleted (fractions allowed). */
      file_retention_days: z.number().positive().max(3650).default(30),
    })
    .strict()
    .default({ discount_percent: 50, max_file_bytes: 50 * 1024 * 1024, concurrency: 4, max_lines: 50_000, file_retention_days: 30 }),
};

const modelSchema = z
  .object({
    name: z.string().min(1),
    owned_by: z.string().min(1),
    kind: z.enum(['chat', 'embedding', 'video']),
    /**
     * The protocol of the channels serving it (optional; checked when given). Every surface reaches
     * every model: a request is translated to its channel's protocol.
     */
    protocol: z.enum(upstreamProtocols).optional(),
    /** Required for chat and embedding models. */
    context_window: positiveInt.optional(),
    max_output_tokens: positiveInt.default(4096),
    tags: z.array(z.string()).default([]),
    input_price_usd_per_million: decimal.default('0'),
    output_price_usd_per_million: decimal.default('0'),
    cache_read_price_usd_per_million: decimal.optional(),
    cache_write_price_usd_per_million: decimal.optional(),
    /** Price list classes beyond the four above (docs/decisions/035); unset: not priced (reported as unpriced). */
    cache_write_1h_price_usd_per_million: decimal.optional(),
    /** Unset: reasoning tokens are priced as output. */
    reasoning_price_usd_per_million: decimal.optional(),
    audio_input_price_usd_per_million: decimal.optional(),
    audio_output_price_usd_per_million: decimal.optional(),
    image_input_price_usd_per_million: decimal.optional(),
    image_output_price_usd_per_million: decimal.optional(),
    /** Above threshold_tokens prompt tokens these prices replace the ones above (unset ones keep them). */
    long_context: longContextSchema.optional(),
    /** Multipliers on the whole price per service tier (batch 0.5, flex 0.5, priority 1.8, ...). */
    service_tier_multipliers: serviceTierSchema.optional(),
    dimensions: positiveInt.optional(),
    tiers: z
      .array(z.enum(tierNames))
      .min(1)
      .default([...tierNames]),
    /** Per-model caps applied to free and pro accounts. */
    rpm: positiveInt.optional(),
    concurrency: positiveInt.optional(),
    /** Platform-wide requests per day, for every tier. */
    platform_daily_requests: positiveInt.optional(),
    /** Platform-wide tokens per minute (input + output, reserved at admission and settled after), for every tier. */
    tpm: positiveInt.optional(),
    /** Tried in order when every channel of this model failed. */
    fallback_models: z.array(z.string()).default([]),
    /** Typical latency, used by service-auto to prefer fast models. */
    latency_ms: positiveInt.optional(),
    /** This model's built-in tool prices, over the top-level ones. */
    tool_prices_usd_per_thousand_calls: toolPricesSchema.optional(),
    /** Video models (kind: video): USD per second of video generated (docs/decisions/037). */
    price_usd_per_second: decimal.optional(),
    /** Video models: the longest video one request may ask for, in seconds. */
    max_seconds: positiveInt.max(600).optional(),
    /** The Batch API's discount on this model's prices, in percent (unset: batches.discount_percent). */
    batch_discount_percent: z.number().min(0).max(100).optional(),
  })
  .strict()
  .refine((m) => m.kind === 'video' || m.context_window !== undefined, { message: 'chat and embedding models need context_window', path: ['context_window'] })
  .refine((m) => m.kind !== 'video' || m.price_usd_per_second !== undefined, {
    message: 'video models need price_usd_per_second',
    path: ['price_usd_per_second'],
  })
  .refine((m) => m.kind !== 'embedding' || m.dimensions !== undefined, {
    message: 'embedding models need dimensions',
    path: ['dimensions'],
  });

export const configSchema = z
  .object({
    usd_to_cny: decimal,
    maintenance: z.boolean().default(false),
    /**
     * When a key budget or the balance cannot cover a request's largest reply, lower its output cap
     * (max_tokens and kin) to what is left instead of refusing it; off: the 402 names that cap.
     */
    clamp_output_to_budget: z.boolean().default(true),
    starting_balance_usd: decimal.default('0'),
    /** Sign-up rules (docs/decisions/050). */
    auth: z
      .object({
        /**
         * A new account is mailed a verification link and cannot redeem codes, recharge or buy a plan
         * until it is opened. Needs SMTP_URL. Accounts that existed before it count as verified.
         */
        require_email_verification: z.boolean().default(false),
      })
      .strict()
      .default({ require_email_verification: false }),
    recharge: z
      .object({ min_usd: decimal.default('5'), max_usd: decimal.default('1000') })
      .strict()
      .default({ min_usd: '5', max_usd: '1000' }),
    limits: z
      .object({
        global_qps: positiveInt.default(100_000),
        embeddings_rpm: positiveInt.default(1000),
        embeddings_concurrency: positiveInt.default(100),
        login_per_ip_per_minute: positiveInt.default(10),
        register_per_ip_per_minute: positiveInt.default(3),
        /** /v1 requests with an unknown or revoked key per client address per minute (per instance) before 429. */
        invalid_keys_per_ip_per_minute: positiveInt.default(60),
        recharge_per_user_per_minute: positiveInt.default(5),
        /** Key creations and edits per account per minute (each edit can re-evaluate budget alerts). */
        key_changes_per_account_per_minute: positiveInt.default(30),
        /** Live (unrevoked) API keys one account may hold. */
        keys_per_account: positiveInt.default(200),
        /** Largest accepted request body. */
        max_body_bytes: positiveInt.default(4 * 1024 * 1024),
      })
      .strict()
      .default({
        global_qps: 100_000,
        embeddings_rpm: 1000,
        embeddings_concurrency: 100,
        login_per_ip_per_minute: 10,
        register_per_ip_per_minute: 3,
        invalid_keys_per_ip_per_minute: 60,
        recharge_per_user_per_minute: 5,
        key_changes_per_account_per_minute: 30,
        keys_per_account: 200,
        max_body_bytes: 4 * 1024 * 1024,
      }),
    /** Stored Responses (/v1/responses with store: true) are kept this many days. */
    responses: z
      .object({
        retention_days: positiveInt.default(30),
        /** Stored bytes (responses and conversations) per account; past it the oldest are evicted. */
        max_bytes_per_account: positiveInt.default(64 * 1024 * 1024),
        /** Stored responses per account; past it the oldest are evicted. */
        max_per_account: positiveInt.default(10_000),
      })
      .strict()
      .default({ retention_days: 30, max_bytes_per_account: 64 * 1024 * 1024, max_per_account: 10_000 }),
    ...jobsConfigShape,
    circuit_breaker: z
      .object({
        failures: positiveInt.default(3),
        cooldown_ms: positiveInt.default(30_000),
        /** Consecutive failures after which a channel is disabled for every instance (unset: never). */
        auto_disable_after: positiveInt.optional(),
        /**
         * The accounts whose requests must make up those consecutive failures: each account's count
         * at most auto_disable_after / this many. A disable acts for every tenant, so one account's
         * requests (an input the upstream chokes on) cannot cause it. 1 for a single-tenant gateway.
         */
        auto_disable_min_accounts: positiveInt.max(16).default(2),
        /** How often an automatically disabled channel is probed; a passing probe enables it again. */
        probe_interval_ms: positiveInt.default(30_000),
      })
      .strict()
      .default({ failures: 3, cooldown_ms: 30_000, auto_disable_min_accounts: 2, probe_interval_ms: 30_000 }),
    /** Channel health states (lib/channels/health.ts) and the operator's state-change webhook. */
    channel_health: z
      .object({
        window_ms: healthThresholdsShape.window_ms.default(60_000),
        min_requests: healthThresholdsShape.min_requests.default(5),
        degraded_error_rate: healthThresholdsShape.degraded_error_rate.default(0.2),
        failed_error_rate: healthThresholdsShape.failed_error_rate.default(0.5),
        degraded_latency_ms: healthThresholdsShape.degraded_latency_ms.default(30_000),
        probe_interval_ms: healthThresholdsShape.probe_interval_ms.default(15_000),
        recover_after: healthThresholdsShape.recover_after.default(3),
        recovering_share: healthThresholdsShape.recovering_share.default(0.1),
        /** Every state change is POSTed here, signed as the budget alerts are (unset: no webhook). */
        webhook_url: z.string().url().optional(),
        /** The environment variable holding its signing secret (`whsec_…`); required with webhook_url. */
        webhook_secret_env: z.string().min(1).optional(),
      })
      .strict()
      .refine((h) => !h.webhook_url || h.webhook_secret_env, { message: 'webhook_url needs webhook_secret_env', path: ['webhook_secret_env'] })
      .default({
        window_ms: 60_000,
        min_requests: 5,
        degraded_error_rate: 0.2,
        failed_error_rate: 0.5,
        degraded_latency_ms: 30_000,
        probe_interval_ms: 15_000,
        recover_after: 3,
        recovering_share: 0.1,
      }),
    /**
     * The response cache (lib/cache/response-cache.ts): opt-in per key or per request
     * (`x-service-cache: ttl=<seconds>`), exact-match, never shared across accounts.
     */
    response_cache: z
      .object({
        enabled: z.boolean().default(true),
        /** The longest TTL a request or key may ask for. */
        max_ttl_seconds: positiveInt.default(86_400),
        /** The largest reply stored (an upstream reply or stream over it is not cached). */
        max_entry_bytes: positiveInt.default(1024 * 1024),
        /** The in-process store's bound, without Redis (the oldest entries go first). */
        memory_max_bytes: positiveInt.default(64 * 1024 * 1024),
        /** The share of the reply's price a hit is billed (0: free, 1: full price). */
        billed_fraction: decimal.refine((v) => Number(v) <= 1, { message: 'must be between 0 and 1' }).default('0'),
      })
      .strict()
      .default({ enabled: true, max_ttl_seconds: 86_400, max_entry_bytes: 1024 * 1024, memory_max_bytes: 64 * 1024 * 1024, billed_fraction: '0' }),
    /** Cache-aware routing (lib/cache/affinity.ts): a conversation stays on the channel that served it while that channel is healthy. */
    cache_affinity: z
      .object({
        enabled: z.boolean().default(true),
        /** How long a conversation keeps its channel after its last request (upstream prompt caches live 5 to 60 minutes). */
        ttl_seconds: positiveInt.default(600),
      })
      .strict()
      .default({ enabled: true, ttl_seconds: 600 }),
    /** Built-in tool prices of every model (a model's own override them). */
    tool_prices_usd_per_thousand_calls: toolPricesSchema.default({}),
    tiers: z.object({ free: tierSchema, pro: tierSchema, vip: tierSchema, enterprise: tierSchema }).strict(),
    plans: z.array(planSchema).max(50).default([]),
    /** Days a subscription whose renewal payment failed is still served (Stripe retries meanwhile). */
    plan_grace_days: z.number().int().min(0).max(30).default(3),
    channels: z.array(channelSchema).min(1),
    models: z.array(modelSchema).min(1),
    log_export: logExportSchema.optional(),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const names = new Set<string>();
    cfg.models.forEach((m, i) => {
      if (names.has(m.name)) ctx.addIssue({ code: 'custom', path: ['models', i, 'name'], message: `duplicate model ${m.name}` });
      names.add(m.name);
    });
    const channelNames = new Set<string>();
    cfg.channels.forEach((c, i) => {
      if (channelNames.has(c.name)) ctx.addIssue({ code: 'custom', path: ['channels', i, 'name'], message: `duplicate channel ${c.name}` });
      channelNames.add(c.name);
      c.models.forEach((m, j) => {
        const model = cfg.models.find((x) => x.name === m);
        if (!model) ctx.addIssue({ code: 'custom', path: ['channels', i, 'models', j], message: `unknown model ${m}` });
        else if (model.protocol !== undefined && model.protocol !== c.protocol)
          ctx.addIssue({ code: 'custom', path: ['channels', i, 'models', j], message: `model ${m} is ${model.protocol}, channel is ${c.protocol}` });
        else if (model.kind === 'embedding' && c.protocol !== 'openai')
          ctx.addIssue({
            code: 'custom',
            path: ['channels', i, 'models', j],
            message: `embedding model ${m} needs an openai channel (embeddings are served on the OpenAI protocol only)`,
          });
      });
    });
    const planIds = new Set<string>();
    cfg.plans.forEach((plan, i) => {
      if (planIds.has(plan.id)) ctx.addIssue({ code: 'custom', path: ['plans', i, 'id'], message: `duplicate plan ${plan.id}` });
      planIds.add(plan.id);
      for (const problem of planProblems(plan, names)) ctx.addIssue({ code: 'custom', path: ['plans', i, ...problem.path], message: problem.message });
    });
    cfg.models.forEach((m, i) => {
      m.fallback_models.forEach((f, j) => {
        if (!names.has(f)) ctx.addIssue({ code: 'custom', path: ['models', i, 'fallback_models', j], message: `unknown model ${f}` });
      });
    });
  });

export type RawConfig = z.infer<typeof configSchema>;
export type RawPlan = z.infer<typeof planSchema>;

/** What the schema alone cannot check of a plan: its models exist, its window names are distinct, counts are whole. */
export function planProblems(plan: RawPlan, modelNames: Set<string>): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  plan.models.forEach((m, j) => {
    if (m !== '*' && !modelNames.has(m)) out.push({ path: ['models', j], message: `unknown model ${m}` });
  });
  const windowNames = new Set<string>();
  plan.windows.forEach((w, j) => {
    if (windowNames.has(w.name)) out.push({ path: ['windows', j, 'name'], message: `duplicate window ${w.name}` });
    windowNames.add(w.name);
    if (plan.unit !== 'usd' && !/^\d+$/.test(w.limit)) out.push({ path: ['windows', j, 'limit'], message: `must be a whole number of ${plan.unit}` });
  });
  return out;
}
