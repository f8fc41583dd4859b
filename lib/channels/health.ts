import { request } from 'undici';
import type { ChannelInfo, GatewayConfig, HealthThresholds } from '@/lib/config';
import { getConfig } from '@/lib/config';
import { alertEventId, webhookHeaders } from '@/lib/alerts/signing';
import { log, errorFields } from '@/lib/log';
import { newRedisClient, redisConfigured, type RedisClient } from '@/lib/redis-client';
import { backoffDelayMs } from '@/lib/backoff';
import { singleton } from '@/lib/singleton';
import { startPeriodic } from '@/lib/periodic';
import {
  applyProbe,
  bucketMs,
  bucketOf,
  DEFAULT_THRESHOLDS,
  evaluateWindow,
  INITIAL_HEALTH,
  windowCounts,
  type ChannelHealth,
  type Counts,
  type HealthState,
} from './health-machine';
import { probeChannel } from './prober';

// Channel health at run time (the state machine is health-machine.ts; docs/decisions/029-channel-health.md).
//
// Hot path: recordHealth() adds an attempt to this process's pending counts, healthOf() reads this
// process's copy of the states; neither waits on anything. Once a second (HEALTH_TICK_MS) every
// instance, in one Redis pipeline, adds its pending counts to the shared window buckets, pushes its
// error samples, and reads back every channel's state, window and samples. Each instance then
// evaluates the shared window; a state change is written only over the version it was computed
// from (a compare-and-set script), so exactly one instance makes each change and sends its webhook.
// Failed and recovering channels are probed by one instance per interval (a SET NX claim).
// Without Redis (one instance) the same happens on an in-process store.

export const HEALTH_TICK_MS = 1000;
/** Error samples kept per channel (the console shows them). */
const SAMPLES = 8;
const KEY = 'gw:{chh}';
const STATE_KEY = `${KEY}:state`;
const winKey = (name: string) => `${KEY}:win:${name}`;
const samplesKey = (name: string) => `${KEY}:smp:${name}`;
const probeKey = (name: string) => `${KEY}:probe:${name}`;

export interface HealthSample {
  at: number;
  status: number | null;
  /** Short and upstream-safe (the attempt's record error, already redacted). */
  error: string;
  /** False for answers that do not count against the channel (upstream 429/529). */
  counted: boolean;
  /** True for a probe's failure. */
  probe?: boolean;
}

interface Store {
  /** Adds pending counts and samples, returns every channel's state, buckets and samples. */
  sync(
    pending: Map<string, Map<number, Counts>>,
    samples: Map<string, HealthSample[]>,
    channels: ChannelInfo[],
  ): Promise<{ states: Map<string, ChannelHealth>; windows: Map<string, Map<number, Counts>>; samples: Map<string, HealthSample[]> }>;
  current(name: string): Promise<ChannelHealth>;
  /** Writes `next` only if the stored version is still `fromV`, the one it was computed from. */
  cas(name: string, fromV: number, next: ChannelHealth): Promise<boolean>;
  claim(key: string, ttlMs: number): Promise<boolean>;
}

const thresholdsOf = (c: ChannelInfo): HealthThresholds => c.health ?? DEFAULT_THRESHOLDS;

function addCounts(map: Map<number, Counts>, bucket: number, c: Counts): void {
  const cur = map.get(bucket);
  if (cur) {
    cur.ok += c.ok;
    cur.fail += c.fail;
    cur.latencyMs += c.latencyMs;
  } else map.set(bucket, { ...c });
}

/** One instance, no Redis: the same shapes in memory. */
class MemoryStore implements Store {
  private states = new Map<string, ChannelHealth>();
  private windows = new Map<string, Map<number, Counts>>();
  private samples = new Map<string, HealthSample[]>();
  private claims = new Map<string, number>();

  sync(pending: Map<string, Map<number, Counts>>, samples: Map<string, HealthSample[]>, channels: ChannelInfo[]) {
    const now = Date.now();
    for (const [name, buckets] of pending) {
      const w = this.windows.get(name) ?? new Map<number, Counts>();
      for (const [b, c] of buckets) addCounts(w, b, c);
      this.windows.set(name, w);
    }
    for (const [name, list] of samples) this.samples.set(name, [...list.reverse(), ...(this.samples.get(name) ?? [])].slice(0, SAMPLES));
    for (const c of channels) {
      const w = this.windows.get(c.name);
      const t = thresholdsOf(c);
      if (w) for (const b of w.keys()) if (b + bucketMs(t) <= now - t.windowMs) w.delete(b);
    }
    return Promise.resolve({ states: new Map(this.states), windows: this.windows, samples: this.samples });
  }
  current(name: string) {
    return Promise.resolve(this.states.get(name) ?? INITIAL_HEALTH);
  }
  cas(name: string, fromV: number, next: ChannelHealth) {
    if ((this.states.get(name)?.v ?? 0) !== fromV) return Promise.resolve(false);
    this.states.set(name, next);
    return Promise.resolve(true);
  }
  claim(key: string, ttlMs: number) {
    const now = Date.now();
    if ((this.claims.get(key) ?? 0) > now) return Promise.resolve(false);
    this.claims.set(key, now + ttlMs);
    return Promise.resolve(true);
  }
}

// The stored version must still be the one the change was computed from (KEYS[1] the state hash).
const CAS_SCRIPT = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local v = 0
if cur then v = cjson.decode(cur).v end
if v ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`;

/**
 * Every key carries the hash tag {chh}: one slot, so that one pipeline reaches them all on Redis
 * Cluster too. Window buckets are hash fields `<bucket start>:o|f|l` (HINCRBY), expired by HDEL
 * of the buckets that left the window and a key TTL.
 */
export class RedisStore implements Store {
  constructor(private readonly client: RedisClient) {}

  async sync(pending: Map<string, Map<number, Counts>>, samples: Map<string, HealthSample[]>, channels: ChannelInfo[]) {
    const now = Date.now();
    const p = this.client.pipeline();
    for (const [name, buckets] of pending) {
      const ttl = thresholdsOf(channels.find((c) => c.name === name) ?? ({} as ChannelInfo)).windowMs * 2 + 60_000;
      for (const [b, c] of buckets) {
        if (c.ok) p.hincrby(winKey(name), `${b}:o`, c.ok);
        if (c.fail) p.hincrby(winKey(name), `${b}:f`, c.fail);
        if (c.latencyMs) p.hincrby(winKey(name), `${b}:l`, Math.round(c.latencyMs));
      }
      p.pexpire(winKey(name), ttl);
    }
    for (const [name, list] of samples) {
      p.lpush(samplesKey(name), ...list.map((s) => JSON.stringify(s)));
      p.ltrim(samplesKey(name), 0, SAMPLES - 1);
    }
    p.hgetall(STATE_KEY);
    for (const c of channels) {
      p.hgetall(winKey(c.name));
      p.lrange(samplesKey(c.name), 0, SAMPLES - 1);
    }
    const results = (await p.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
    const tail = results.slice(results.length - 1 - channels.length * 2);
    const states = new Map<string, ChannelHealth>();
    for (const [name, text] of Object.entries((tail[0][1] as Record<string, string>) ?? {})) {
      try {
        states.set(name, JSON.parse(text) as ChannelHealth);
      } catch {
        /* a foreign value: ignore */
      }
    }
    const windows = new Map<string, Map<number, Counts>>();
    const sampled = new Map<string, HealthSample[]>();
    const stale: [string, string[]][] = [];
    channels.forEach((c, i) => {
      const t = thresholdsOf(c);
      const hash = (tail[1 + i * 2][1] as Record<string, string>) ?? {};
      const w = new Map<number, Counts>();
      const old: string[] = [];
      for (const [field, value] of Object.entries(hash)) {
        const [start, kind] = field.split(':');
        const b = Number(start);
        if (b + bucketMs(t) <= now - t.windowMs) {
          old.push(field);
          continue;
        }
        const n = Number(value);
        addCounts(w, b, { ok: kind === 'o' ? n : 0, fail: kind === 'f' ? n : 0, latencyMs: kind === 'l' ? n : 0 });
      }
      if (old.length) stale.push([c.name, old]);
      windows.set(c.name, w);
      const list = (tail[2 + i * 2][1] as string[]) ?? [];
      sampled.set(
        c.name,
        list.flatMap((s) => {
          try {
            return [JSON.parse(s) as HealthSample];
          } catch {
            return [];
          }
        }),
      );
    });
    if (stale.length) {
      const d = this.client.pipeline();
      for (const [name, fields] of stale) d.hdel(winKey(name), ...fields);
      await d.exec().catch(() => undefined);
    }
    return { states, windows, samples: sampled };
  }

  async current(name: string) {
    const text = await this.client.hget(STATE_KEY, name);
    return text ? (JSON.parse(text) as ChannelHealth) : INITIAL_HEALTH;
  }

  async cas(name: string, fromV: number, next: ChannelHealth) {
    return (await this.client.eval(CAS_SCRIPT, 1, STATE_KEY, name, String(fromV), JSON.stringify(next))) === 1;
  }

  async claim(key: string, ttlMs: number) {
    return (await this.client.set(key, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }
}

interface Runtime {
  /** This process's copy of every channel's state (the router reads it). */
  states: Map<string, ChannelHealth>;
  /** Channels not healthy (the router's fast path skips its sort when there are none). */
  unhealthy: number;
  windows: Map<string, Map<number, Counts>>;
  samples: Map<string, HealthSample[]>;
  pending: Map<string, Map<number, Counts>>;
  pendingSamples: Map<string, HealthSample[]>;
  probing: Set<string>;
  memory: MemoryStore;
  redis?: RedisClient;
  lastSync: number;
}

const runtime = () =>
  singleton<Runtime>('channel-health', () => ({
    states: new Map(),
    unhealthy: 0,
    windows: new Map(),
    samples: new Map(),
    pending: new Map(),
    pendingSamples: new Map(),
    probing: new Set(),
    memory: new MemoryStore(),
    lastSync: 0,
  }));

function store(): Store {
  const r = runtime();
  if (!redisConfigured()) return r.memory;
  r.redis ??= newRedisClient('channel-health', { maxRetriesPerRequest: 1, retryStrategy: () => 500, lazyConnect: false })!;
  return new RedisStore(r.redis);
}

/**
 * One attempt's outcome on the hot path: `ok` true (a good answer, with its latency), false (the
 * channel's fault) or null (an answer that does not count: upstream 429/529), with a sample of
 * the failure for the console. Synchronous, in memory; shared at the next tick.
 */
export function recordHealth(channel: ChannelInfo, ok: boolean | null, latencyMs: number, sample?: { status?: number; error?: string }): void {
  const r = runtime();
  if (ok !== null) {
    const bucket = bucketOf(Date.now(), thresholdsOf(channel));
    let buckets = r.pending.get(channel.name);
    if (!buckets) r.pending.set(channel.name, (buckets = new Map()));
    addCounts(buckets, bucket, { ok: ok ? 1 : 0, fail: ok ? 0 : 1, latencyMs: ok ? latencyMs : 0 });
  }
  if (ok !== true && sample) pushSample(channel.name, { at: Date.now(), status: sample.status ?? null, error: sample.error ?? '', counted: ok === false });
}

function pushSample(name: string, s: HealthSample): void {
  const r = runtime();
  const list = r.pendingSamples.get(name) ?? [];
  // Only the last few matter: a flood of failures between two ticks keeps the newest.
  if (list.length >= SAMPLES) list.shift();
  list.push(s);
  r.pendingSamples.set(name, list);
}

/** This process's view of a channel's state (synchronous; refreshed every tick). */
export function healthOf(name: string): HealthState {
  const r = runtime();
  return r.unhealthy === 0 ? 'healthy' : (r.states.get(name)?.state ?? 'healthy');
}

export function anyUnhealthy(): boolean {
  return runtime().unhealthy > 0;
}

function install(states: Map<string, ChannelHealth>): void {
  const r = runtime();
  r.states = states;
  let n = 0;
  for (const h of states.values()) if (h.state !== 'healthy') n++;
  r.unhealthy = n;
}

/** A state change this instance made: logged, and POSTed to the operator's webhook. */
function announce(cfg: GatewayConfig, name: string, from: ChannelHealth, to: ChannelHealth, counts?: Counts): void {
  if (from.state === to.state) return;
  log(to.state === 'healthy' ? 'info' : 'warn', 'channel health changed', { channel: name, from: from.state, to: to.state, reason: to.reason?.code });
  const hook = cfg.healthWebhook;
  if (!hook) return;
  const id = alertEventId(['channel-health', name, to.v, to.since]);
  const payload = {
    type: 'channel.health_changed',
    id,
    created: Math.floor(to.since / 1000),
    data: {
      channel: name,
      from: from.state,
      to: to.state,
      reason: to.reason,
      at: new Date(to.since).toISOString(),
      window: counts ? { ok: counts.ok, failed: counts.fail } : null,
      samples: (runtime().samples.get(name) ?? []).slice(0, 3),
    },
  };
  void deliver(hook, id, JSON.stringify(payload));
}

const WEBHOOK_BACKOFF = { baseMs: 1000, factor: 4, maxMs: Infinity };

/** A few tries with back-off (1 s, 4 s, 16 s): state changes are rare and a later one supersedes. */
async function deliver(hook: { url: string; secret: string }, id: string, body: string): Promise<void> {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, backoffDelayMs(attempt, WEBHOOK_BACKOFF)).unref());
    try {
      // The operator's own URL from the operator config: trusted, so private addresses are allowed
      // (the budget alerts' account-set URLs are not; lib/alerts/webhook-url.ts).
      const res = await request(hook.url, {
        method: 'POST',
        headers: { ...webhookHeaders(hook.secret, id, body), 'user-agent': 'model-gateway-webhooks/1' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (res.statusCode >= 200 && res.statusCode < 300) return;
    } catch {
      /* retried */
    }
  }
  log('warn', 'channel health webhook not delivered', { id });
}

/** One tick: share the pending counts, read the shared view, make the changes it calls for, start due probes. Exported for tests. */
export async function healthTick(): Promise<void> {
  const cfg = getConfig();
  const r = runtime();
  const pending = r.pending;
  const pendingSamples = r.pendingSamples;
  r.pending = new Map();
  r.pendingSamples = new Map();
  const s = store();
  let view;
  try {
    view = await s.sync(pending, pendingSamples, cfg.channels);
  } catch (err) {
    // Redis unreachable: the last states known stay in force and the counts wait for the next tick
    // (buckets that left the window by then are dropped as Redis reads them back).
    for (const [name, buckets] of pending) {
      const into = r.pending.get(name) ?? new Map<number, Counts>();
      for (const [b, c] of buckets) addCounts(into, b, c);
      r.pending.set(name, into);
    }
    for (const [name, list] of pendingSamples) for (const sample of list) pushSample(name, sample);
    throw err;
  }
  install(view.states);
  r.windows = view.windows;
  r.samples = view.samples;
  r.lastSync = Date.now();
  const now = Date.now();
  for (const c of cfg.channels) {
    const t = thresholdsOf(c);
    const h = view.states.get(c.name) ?? INITIAL_HEALTH;
    const counts = windowCounts(view.windows.get(c.name) ?? new Map(), now, t, h.windowFrom);
    const next = evaluateWindow(h, counts, t, now);
    if (next && (await s.cas(c.name, h.v, next))) {
      r.states.set(c.name, next);
      install(r.states);
      announce(cfg, c.name, h, next, counts);
    }
    const state = r.states.get(c.name)?.state;
    if ((state === 'failed' || state === 'recovering') && !r.probing.has(c.name) && (await s.claim(probeKey(c.name), t.probeIntervalMs))) {
      r.probing.add(c.name);
      void probe(s, cfg, c).finally(() => r.probing.delete(c.name));
    }
  }
}

/** One scheduled probe of a failed or recovering channel, and its verdict. */
async function probe(s: Store, cfg: GatewayConfig, channel: ChannelInfo): Promise<void> {
  const t = thresholdsOf(channel);
  try {
    const result = await probeChannel(channel, cfg, Math.min(10_000, Math.max(1000, t.probeIntervalMs)));
    const limited = result.status === 429 || result.status === 529;
    if (!result.ok) pushSample(channel.name, { at: Date.now(), status: result.status, error: `probe: ${result.detail}`, counted: !limited, probe: true });
    const h = await s.current(channel.name);
    const next = applyProbe(h, limited ? null : result.ok, result.detail, t, Date.now());
    if (next && (await s.cas(channel.name, h.v, next))) {
      const r = runtime();
      r.states.set(channel.name, next);
      install(r.states);
      announce(cfg, channel.name, h, next);
    }
  } catch (err) {
    log('warn', 'channel health probe failed', { channel: channel.name, ...errorFields(err) });
  }
}

/** Starts the per-process loop (idempotent); started beside the channel override sync. */
export function startChannelHealth(): void {
  startPeriodic('channel health', HEALTH_TICK_MS, healthTick, { runNow: true });
}

export interface ChannelHealthView {
  state: HealthState;
  since: string | null;
  reason: ChannelHealth['reason'];
  probeSuccesses: number;
  /** The window's counted attempts as this instance last read them. */
  window: { ok: number; failed: number; errorRate: number; meanLatencyMs: number | null };
  samples: HealthSample[];
}

/** Every channel's health for the console (this instance's copy of the shared state). */
export function healthSnapshot(): Map<string, ChannelHealthView> {
  const cfg = getConfig();
  const r = runtime();
  const now = Date.now();
  const out = new Map<string, ChannelHealthView>();
  for (const c of cfg.channels) {
    const h = r.states.get(c.name) ?? INITIAL_HEALTH;
    const w = windowCounts(r.windows.get(c.name) ?? new Map(), now, thresholdsOf(c), h.windowFrom);
    const total = w.ok + w.fail;
    out.set(c.name, {
      state: h.state,
      since: h.since ? new Date(h.since).toISOString() : null,
      reason: h.reason,
      probeSuccesses: h.probeSuccesses,
      window: { ok: w.ok, failed: w.fail, errorRate: total ? w.fail / total : 0, meanLatencyMs: w.ok ? Math.round(w.latencyMs / w.ok) : null },
      samples: r.samples.get(c.name) ?? [],
    });
  }
  return out;
}

/** For tests: this instance's copy set directly (the router's unit tests). */
export function setHealthForTest(name: string, state: HealthState | null): void {
  const r = runtime();
  if (state === null) r.states.delete(name);
  else r.states.set(name, { ...INITIAL_HEALTH, state, since: Date.now() });
  install(r.states);
}
