// The operator config the tests and the benchmark run the gateway with: tiers, the model catalogue
// and channels pointing at local fake upstreams. Plain JavaScript (typed by operator-config.d.mts) so
// that the plain-node helpers (fake upstreams run as child processes), the benchmark and the
// TypeScript tests (tests/support/gateway.ts) share the one module.

export const FIXTURE_TIERS = {
  free: { rpm: 60, rph: 600, tokens_per_day: 100000, concurrency: 2 },
  pro: { rpm: 300, rph: 10000, concurrency: 8, promote_at_monthly_spend_usd: '50' },
  vip: { rpm: 1500, max_rpm: 3000, rph: 100000, concurrency: 32, max_concurrency: 64, promote_at_monthly_spend_usd: '500' },
  enterprise: { rpm: 10000, rph: 1000000, concurrency: 256 },
};

export const FIXTURE_MODELS = [
  {
    name: 'gpt-4o-mini',
    owned_by: 'openai',
    kind: 'chat',
    context_window: 128000,
    max_output_tokens: 4096,
    tags: ['chat', 'fast'],
    input_price_usd_per_million: '0.15',
    output_price_usd_per_million: '0.6',
    rpm: 1000,
    concurrency: 50,
    fallback_models: ['deepseek-chat'],
  },
  {
    name: 'gpt-4o',
    owned_by: 'openai',
    kind: 'chat',
    context_window: 128000,
    max_output_tokens: 4096,
    tags: ['chat', 'code'],
    input_price_usd_per_million: '2.5',
    output_price_usd_per_million: '10',
    tiers: ['pro', 'vip', 'enterprise'],
  },
  {
    name: 'deepseek-chat',
    owned_by: 'deepseek',
    kind: 'chat',
    context_window: 64000,
    max_output_tokens: 4096,
    tags: ['chat', 'code'],
    input_price_usd_per_million: '0.27',
    output_price_usd_per_million: '1.1',
  },
  {
    name: 'claude-sonnet-4-5',
    owned_by: 'anthropic',
    kind: 'chat',
    protocol: 'anthropic',
    context_window: 200000,
    max_output_tokens: 8192,
    input_price_usd_per_million: '3',
    output_price_usd_per_million: '15',
    cache_read_price_usd_per_million: '0.3',
    cache_write_price_usd_per_million: '3.75',
  },
  {
    name: 'claude-haiku-4-5',
    owned_by: 'anthropic',
    kind: 'chat',
    protocol: 'anthropic',
    context_window: 200000,
    max_output_tokens: 8192,
    input_price_usd_per_million: '1',
    output_price_usd_per_million: '5',
    cache_read_price_usd_per_million: '0.1',
    cache_write_price_usd_per_million: '1.25',
  },
  { name: 'text-embedding-3-small', owned_by: 'openai', kind: 'embedding', context_window: 8191, dimensions: 1536, input_price_usd_per_million: '0.02' },
  { name: 'bge-m3', owned_by: 'baai', kind: 'embedding', context_window: 8192, dimensions: 1024, input_price_usd_per_million: '0.02' },
];

/** A chat model on Gemini channels: added to the catalogue by the configs that have such channels. */
export const GEMINI_MODEL = {
  name: 'gemini-2.5-flash',
  owned_by: 'google',
  kind: 'chat',
  context_window: 1048576,
  max_output_tokens: 8192,
  input_price_usd_per_million: '0.3',
  output_price_usd_per_million: '2.5',
  cache_read_price_usd_per_million: '0.075',
};

/** What each fake upstream serves of FIXTURE_MODELS (and GEMINI_MODEL). */
export const CHANNEL_MODELS = {
  openai: ['gpt-4o-mini', 'gpt-4o', 'deepseek-chat', 'text-embedding-3-small', 'bge-m3'],
  anthropic: ['claude-sonnet-4-5', 'claude-haiku-4-5'],
  gemini: [GEMINI_MODEL.name],
};

/**
 * A channel `<prefix><protocol>-<suffix>` to a fake upstream at `url` (OpenAI channels under `/v1`), with
 * an upstream key the log-secret scan looks for (`upstream-secret-…`), labelled with its name.
 */
export function fixtureChannel({ protocol, suffix, url, priority, timeouts, models = CHANNEL_MODELS[protocol], prefix = '' }) {
  const name = `${prefix}${protocol}-${suffix}`;
  return {
    name,
    // Public label = name, so that tests can tell the fixture channels apart by `X-Service-Provider`
    // (which carries the label); provider-labels.test.ts removes it to see the generic names.
    label: name,
    protocol,
    base_url: protocol === 'openai' ? `${url}/v1` : url,
    api_key: `upstream-secret-${protocol}-${suffix}`,
    models,
    priority,
    timeouts,
  };
}

/**
 * The whole config: the fixture tiers and models (plus `models`), the given channels, then `extra`
 * on top. A fresh copy every call: tests adjust their config in place (a tier's quota, a model).
 */
export function fixtureConfig({ channels, models = [], extra = {} }) {
  return {
    usd_to_cny: '7.2',
    circuit_breaker: { failures: 3, cooldown_ms: 2000 },
    // Channel health never judges in the fixtures (their fallback and breaker tests fail a channel
    // many times on purpose); tests/integration/channel-health.test.ts sets its own thresholds.
    channel_health: { min_requests: 100_000 },
    tiers: structuredClone(FIXTURE_TIERS),
    channels,
    models: structuredClone([...FIXTURE_MODELS, ...models]),
    ...extra,
  };
}
