import { singleton } from '@/lib/singleton';

// A small Prometheus registry: counters and fixed-bucket histograms, label sets as keys.
type Labels = Record<string, string>;

const BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];

interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

interface Registry {
  counters: Map<string, Map<string, number>>;
  histograms: Map<string, Map<string, Histogram>>;
  help: Map<string, string>;
}

const registry = (): Registry => singleton('metrics', () => ({ counters: new Map(), histograms: new Map(), help: new Map() }));

// Rendered label sets, by their values in key order (requests repeat the same few sets).
const labelKeyCache = new Map<string, string>();

function labelKey(labels: Labels): string {
  let id = '';
  for (const k in labels) id += `${k}\u0000${labels[k]}\u0001`;
  let key = labelKeyCache.get(id);
  if (key === undefined) {
    key = renderLabels(labels);
    if (labelKeyCache.size > 10_000) labelKeyCache.clear();
    labelKeyCache.set(id, key);
  }
  return key;
}

function renderLabels(labels: Labels): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.join(',');
}

export function describe(name: string, help: string): void {
  registry().help.set(name, help);
}

export function inc(name: string, labels: Labels = {}, by = 1): void {
  const r = registry();
  let series = r.counters.get(name);
  if (!series) r.counters.set(name, (series = new Map()));
  const key = labelKey(labels);
  series.set(key, (series.get(key) ?? 0) + by);
}

export function observe(name: string, labels: Labels, valueMs: number): void {
  const r = registry();
  let series = r.histograms.get(name);
  if (!series) r.histograms.set(name, (series = new Map()));
  const key = labelKey(labels);
  let h = series.get(key);
  if (!h) series.set(key, (h = { buckets: BUCKETS_MS.map(() => 0), sum: 0, count: 0 }));
  for (let i = 0; i < BUCKETS_MS.length; i++) if (valueMs <= BUCKETS_MS[i]) h.buckets[i]++;
  h.sum += valueMs;
  h.count++;
}

/** A gauge: one value, or one value per label set (e.g. `{ type: 'Timeout' }`). */
export type Gauge = number | { labels: Labels; value: number }[];

export function renderMetrics(gauges: Record<string, Gauge> = {}): string {
  const r = registry();
  const lines: string[] = [];
  const withLabels = (name: string, key: string, extra = '') => {
    const all = [key, extra].filter(Boolean).join(',');
    return all ? `${name}{${all}}` : name;
  };
  for (const [name, series] of r.counters) {
    if (r.help.has(name)) lines.push(`# HELP ${name} ${r.help.get(name)}`);
    lines.push(`# TYPE ${name} counter`);
    for (const [key, value] of series) lines.push(`${withLabels(name, key)} ${value}`);
  }
  for (const [name, series] of r.histograms) {
    if (r.help.has(name)) lines.push(`# HELP ${name} ${r.help.get(name)}`);
    lines.push(`# TYPE ${name} histogram`);
    for (const [key, h] of series) {
      BUCKETS_MS.forEach((b, i) => lines.push(`${withLabels(`${name}_bucket`, key, `le="${b}"`)} ${h.buckets[i]}`));
      lines.push(`${withLabels(`${name}_bucket`, key, 'le="+Inf"')} ${h.count}`);
      lines.push(`${withLabels(`${name}_sum`, key)} ${h.sum}`);
      lines.push(`${withLabels(`${name}_count`, key)} ${h.count}`);
    }
  }
  for (const [name, value] of Object.entries(gauges)) {
    if (r.help.has(name)) lines.push(`# HELP ${name} ${r.help.get(name)}`);
    lines.push(`# TYPE ${name} gauge`);
    if (typeof value === 'number') lines.push(`${name} ${value}`);
    else for (const s of value) lines.push(`${withLabels(name, labelKey(s.labels))} ${s.value}`);
  }
  return `${lines.join('\n')}\n`;
}
