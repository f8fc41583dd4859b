import { Counter, Gauge as PromGauge, Histogram, Registry } from 'prom-client';
import { singleton } from '@/lib/singleton';

// Prometheus metrics through prom-client (docs/decisions/028-prom-client-and-pino.md). Callers keep
// the small API they had (`inc`, `observe`): a metric is made the first time it is named, its label
// names those of that first call. Counters and histograms are updated on the request path (a few
// per request, each a label hash and a map update); gauges are set only when /metrics is scraped.
type Labels = Record<string, string>;

const BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];

/**
 * Buckets of the GenAI histograms: the OpenTelemetry semantic conventions' advice for
 * gen_ai.client.token.usage, gen_ai.server.time_to_first_token and gen_ai.server.time_per_output_token.
 */
const BUCKETS: Record<string, number[]> = {
  gen_ai_client_token_usage: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  gen_ai_server_time_to_first_token_seconds: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  gen_ai_server_time_per_output_token_seconds: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5],
};

const HELP: Record<string, string> = {
  gateway_requests_total: 'Gateway requests answered, by endpoint and status.',
  gateway_request_duration_ms: 'Gateway request latency in milliseconds, by endpoint.',
  gateway_cost_usd_pico_total: 'Amount billed in pico-dollars (1e-12 USD), by endpoint.',
  gateway_upstream_attempts_total: 'Upstream calls made, by channel.',
  gateway_upstream_failures_total: 'Upstream calls that failed (fallback may follow), by channel.',
  gateway_upstream_rate_limited_total: 'Upstream calls answered 429/529, by channel.',
  gateway_usage_unpriced_total: 'Requests whose upstream reported a usage class the model has no price of its own for, by model and class.',
  gen_ai_client_token_usage: 'Tokens per request (gen_ai.client.token.usage), by token type, model and channel.',
  gen_ai_server_time_to_first_token_seconds: 'Time to the first streamed token, by model and channel.',
  gen_ai_server_time_per_output_token_seconds: 'Time per output token after the first of a stream, by model and channel.',
};

interface Metrics {
  registry: Registry;
  counters: Map<string, Counter>;
  histograms: Map<string, Histogram>;
  gauges: Map<string, PromGauge>;
  help: Map<string, string>;
}

const metrics = (): Metrics =>
  singleton('prom-metrics', () => ({ registry: new Registry(), counters: new Map(), histograms: new Map(), gauges: new Map(), help: new Map() }));

const helpOf = (m: Metrics, name: string) => m.help.get(name) ?? HELP[name] ?? name.replace(/_/g, ' ');

export function describe(name: string, help: string): void {
  metrics().help.set(name, help);
}

export function inc(name: string, labels: Labels = {}, by = 1): void {
  const m = metrics();
  let c = m.counters.get(name);
  if (!c) m.counters.set(name, (c = new Counter({ name, help: helpOf(m, name), labelNames: Object.keys(labels), registers: [m.registry] })));
  try {
    c.inc(labels, by);
  } catch {
    // A label set other than the first call's: a bug in a caller, never a reason to fail a request.
  }
}

export function observe(name: string, labels: Labels, value: number): void {
  const m = metrics();
  let h = m.histograms.get(name);
  if (!h) {
    h = new Histogram({ name, help: helpOf(m, name), labelNames: Object.keys(labels), buckets: BUCKETS[name] ?? BUCKETS_MS, registers: [m.registry] });
    m.histograms.set(name, h);
  }
  try {
    h.observe(labels, value);
  } catch {
    // As for inc.
  }
}

/** A gauge: one value, or one value per label set (e.g. `{ type: 'Timeout' }`). */
export type Gauge = number | { labels: Labels; value: number }[];

/** The Prometheus text of every metric, with `gauges` (computed by the caller at scrape time) set first. */
export async function renderMetrics(gauges: Record<string, Gauge> = {}): Promise<string> {
  const m = metrics();
  for (const [name, value] of Object.entries(gauges)) {
    let g = m.gauges.get(name);
    if (!g) {
      if (typeof value !== 'number' && value.length === 0) continue; // its label names are not known yet
      const labelNames = typeof value === 'number' ? [] : Object.keys(value[0]?.labels ?? {});
      m.gauges.set(name, (g = new PromGauge({ name, help: helpOf(m, name), labelNames, registers: [m.registry] })));
    }
    // A labelled gauge holds only this scrape's series (a channel removed is gone).
    g.reset();
    try {
      if (typeof value === 'number') g.set(value);
      else for (const s of value) g.set(s.labels, s.value);
    } catch {
      // A label set other than the first scrape's: left out rather than failing the scrape.
    }
  }
  return m.registry.metrics();
}

/** The registry's content type (Prometheus text format 0.0.4). */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
