// The billing conformance suite's golden fixtures (tests/fixtures/billing/*.json): one recorded
// upstream reply per protocol and usage shape, with the exact cost it must be billed, and the
// catalogue and channels they are replayed against (a fake upstream sending them verbatim).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fixtureChannel, fixtureConfig } from './operator-config.mjs';

export type BillingUpstream = 'openai' | 'responses' | 'anthropic' | 'gemini';
export type ClientSurface = 'openai' | 'responses' | 'anthropic' | 'gemini';
export const CLIENT_SURFACES: ClientSurface[] = ['openai', 'responses', 'anthropic', 'gemini'];

export interface BillingFixture {
  name: string;
  what: string;
  upstream: BillingUpstream;
  model: string;
  stream: boolean;
  /** A whole reply's JSON. */
  reply?: unknown;
  /** A stream's events: `event` (Anthropic, Responses) and `data` (JSON, or the text `[DONE]`). */
  events?: { event?: string; data: unknown }[];
  /** The upstream connection breaks after this many events. */
  cut_after_events?: number;
  /** The surfaces that can ask for this reply, with what their request must add (default: all, nothing). */
  surfaces?: Partial<Record<ClientSurface, Record<string, unknown>>>;
  /** What the client's usage object must show, per surface (matched as a subset): every class carried where the protocol has a field. */
  client_usage?: Partial<Record<ClientSurface, Record<string, unknown>>>;
  /** How the cost is made up (documentation). */
  priced: string;
  cost_pico_usd: string;
  /** Classes without a price of their own (x-service-unpriced, the log's billing note). */
  unpriced?: string[];
  /** The log row's token columns. */
  log: { prompt: number; completion: number; cache_read: number; cache_write: number };
}

const DIR = path.resolve(import.meta.dirname, '../fixtures/billing');

export function billingFixtures(): BillingFixture[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ name: f.replace(/\.json$/, ''), ...(JSON.parse(readFileSync(path.join(DIR, f), 'utf8')) as Omit<BillingFixture, 'name'>) }));
}

/** The upstream's bytes: the reply's JSON, or the SSE text of its events. */
export function upstreamBody(f: BillingFixture): string {
  if (!f.stream) return JSON.stringify(f.reply);
  return f.events!.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('');
}

/** The surfaces a fixture is replayed through, with their request additions. */
export function surfacesOf(f: BillingFixture): [ClientSurface, Record<string, unknown>][] {
  return f.surfaces ? (Object.entries(f.surfaces) as [ClientSurface, Record<string, unknown>][]) : CLIENT_SURFACES.map((s) => [s, {}]);
}

/**
 * Price lists of the fixtures' models (USD per million tokens), today's published ones for the
 * model each stands for: Claude Sonnet 4.5 (1-hour writes, 200k long context, web search), GPT-4o
 * audio (audio in and out apart; flex and priority tiers), Gemini 2.5 Pro (long context; no audio price: the unpriced case).
 */
export const BILLING_MODELS = [
  {
    name: 'bill-claude',
    owned_by: 'anthropic',
    kind: 'chat',
    protocol: 'anthropic',
    context_window: 1000000,
    max_output_tokens: 64000,
    input_price_usd_per_million: '3',
    output_price_usd_per_million: '15',
    cache_read_price_usd_per_million: '0.3',
    cache_write_price_usd_per_million: '3.75',
    cache_write_1h_price_usd_per_million: '6',
    long_context: {
      threshold_tokens: 200000,
      input_price_usd_per_million: '6',
      output_price_usd_per_million: '22.5',
      cache_read_price_usd_per_million: '0.6',
      cache_write_price_usd_per_million: '7.5',
      cache_write_1h_price_usd_per_million: '12',
    },
    tool_prices_usd_per_thousand_calls: { web_search: '10' },
  },
  {
    name: 'bill-gpt',
    owned_by: 'openai',
    kind: 'chat',
    context_window: 128000,
    max_output_tokens: 16384,
    input_price_usd_per_million: '2.5',
    output_price_usd_per_million: '10',
    cache_read_price_usd_per_million: '1.25',
    audio_input_price_usd_per_million: '40',
    audio_output_price_usd_per_million: '80',
    service_tier_multipliers: { flex: 0.5, priority: 1.7 },
  },
  {
    name: 'bill-gpt-r',
    owned_by: 'openai',
    kind: 'chat',
    context_window: 128000,
    max_output_tokens: 16384,
    input_price_usd_per_million: '2.5',
    output_price_usd_per_million: '10',
    cache_read_price_usd_per_million: '1.25',
  },
  {
    name: 'bill-gemini',
    owned_by: 'google',
    kind: 'chat',
    protocol: 'gemini',
    context_window: 1048576,
    max_output_tokens: 65536,
    input_price_usd_per_million: '1.25',
    output_price_usd_per_million: '10',
    cache_read_price_usd_per_million: '0.125',
    long_context: {
      threshold_tokens: 200000,
      input_price_usd_per_million: '2.5',
      output_price_usd_per_million: '15',
      cache_read_price_usd_per_million: '0.25',
    },
  },
] as const;

export const maxOutputOf = (model: string): number => BILLING_MODELS.find((m) => m.name === model)!.max_output_tokens;

/** The operator config: one channel per upstream protocol (and a native Responses one) at the fake `url`. */
export function billingConfig(url: string): Record<string, unknown> {
  const timeouts = { connect_ms: 1000, first_byte_ms: 5000, idle_ms: 5000 };
  const ch = (protocol: 'openai' | 'anthropic' | 'gemini', suffix: string, models: string[]) =>
    fixtureChannel({ protocol, suffix, url, priority: 10, timeouts, models, prefix: 'billconf-' });
  return fixtureConfig({
    channels: [
      ch('openai', 'chat', ['bill-gpt']),
      { ...ch('openai', 'responses', ['bill-gpt-r']), responses: true },
      ch('anthropic', '1', ['bill-claude']),
      ch('gemini', '1', ['bill-gemini']),
    ],
    models: BILLING_MODELS.map((m) => structuredClone(m) as unknown as Record<string, unknown>),
  });
}
