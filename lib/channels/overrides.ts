import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { ChannelInfo } from '@/lib/config';
import { getConfig } from '@/lib/config';
import { getDb } from '@/lib/db';
import { newRedisClient, redisConfigured, type RedisClient } from '@/lib/redis-client';
import { codedError, GatewayError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { periodicRunning, startPeriodic } from '@/lib/periodic';
import { breakerSnapshot, recordChannelResult } from './breaker';
import { writeAudit, SYSTEM_ACTOR, type Actor } from '@/lib/audit';
import { probeChannel, setChannelProbe, type ChannelProbe } from './prober';
import { startChannelHealth } from './health';

// Runtime channel state set from the operator console: disabled or not, a weight override, and
// overrides of the channel's limits (concurrency, tokens per minute) over the operator config's.
// PostgreSQL keeps it (it survives restarts); Redis shares it: the hash OVERRIDES_KEY holds one JSON
// per channel and every instance re-reads it every SYNC_MS, so a change reaches every instance
// within that (a hash of a few channels: one cheap HGETALL per instance per half second, off the
// request path). The router asks synchronously (applyChannelOverrides) from the in-memory copy.
// Without Redis there is one instance: its copy is updated at once and re-read from the database.
// Server processes start the sync in instrumentation.ts.

export interface ChannelOverride {
  disabled: boolean;
  weight?: number;
  /** In place of the config's `concurrency` / `tpm` (lib/gateway/admission/channel.ts). */
  concurrency?: number;
  tpm?: number;
  /** "manual", or "auto" when disabled after consecutive failures (the probe may enable it again). */
  reason?: string | null;
  updatedBy?: string | null;
  updatedAt: string;
}

const OVERRIDES_KEY = 'gw:chan:ovr';
/** Present in the hash once it was filled from the database: an empty or flushed Redis is refilled. */
const SEEDED_FIELD = '__seeded';
const BREAKER_KEY_PREFIX = 'gw:chan:brk:';
const SYNC_MS = 500;
const DB_SYNC_MS = 2000;
const SYNC_LOOP = 'channel override sync';
const BREAKER_TTL_MS = 10_000;

interface State {
  map: Map<string, ChannelOverride>;
  redis?: RedisClient;
  lastDbSync: number;
  lastBreakerPublish: number;
  lastProbe: Map<string, number>;
  probing: Set<string>;
  instanceId: string;
  /** Local changes under way, and made so far: a refresh whose read may predate one installs nothing (the next one reads it). */
  writing: number;
  writes: number;
}

const state = () =>
  singleton<State>('channel-overrides', () => ({
    map: new Map(),
    lastDbSync: 0,
    lastBreakerPublish: 0,
    lastProbe: new Map(),
    probing: new Set(),
    instanceId: randomUUID(),
    writing: 0,
    writes: 0,
  }));

function redis(): RedisClient | undefined {
  const s = state();
  if (!redisConfigured()) return undefined;
  if (!s.redis) {
    s.redis = newRedisClient('channel-overrides', { maxRetriesPerRequest: 1, retryStrategy: () => 500, lazyConnect: false })!;
  }
  return s.redis;
}

/** The override of one channel, if any (synchronous: the in-memory copy). */
export function channelOverride(channelId: string): { disabled: boolean; weight?: number; concurrency?: number; tpm?: number } | undefined {
  return state().map.get(channelId);
}

/** Whether an override changes anything (a row of all defaults is none). */
const isActive = (o: { disabled: boolean; weight?: number; concurrency?: number; tpm?: number }) =>
  o.disabled || o.weight !== undefined || o.concurrency !== undefined || o.tpm !== undefined;

/** Limits a console change may set: whole numbers within these (null: back to the operator config's). */
export const CHANNEL_LIMIT_BOUNDS = { concurrency: { min: 1, max: 100_000 }, tpm: { min: 1, max: 1_000_000_000 } } as const;

/**
 * The router's one call: drops disabled channels and applies weight and limit overrides. Without
 * overrides (the usual case) it returns the same array.
 */
export function applyChannelOverrides(channels: ChannelInfo[]): ChannelInfo[] {
  const s = state();
  if (s.map.size === 0) return channels;
  let changed = false;
  const out: ChannelInfo[] = [];
  for (const c of channels) {
    const o = s.map.get(c.name);
    if (!o) out.push(c);
    else if (o.disabled) changed = true;
    else if (
      (o.weight !== undefined && o.weight !== c.weight) ||
      (o.concurrency !== undefined && o.concurrency !== c.concurrency) ||
      (o.tpm !== undefined && o.tpm !== c.tpm)
    ) {
      out.push({ ...c, weight: o.weight ?? c.weight, concurrency: o.concurrency ?? c.concurrency, tpm: o.tpm ?? c.tpm });
      changed = true;
    } else out.push(c);
  }
  return changed ? out : channels;
}

function parseHash(hash: Record<string, string>): Map<string, ChannelOverride> {
  const map = new Map<string, ChannelOverride>();
  for (const [id, text] of Object.entries(hash)) {
    if (id === SEEDED_FIELD) continue;
    try {
      const o = JSON.parse(text) as ChannelOverride;
      if (isActive(o)) map.set(id, o);
    } catch {
      /* a foreign value: ignore */
    }
  }
  return map;
}

async function readDb(): Promise<Map<string, ChannelOverride>> {
  const rows = await (await getDb()).channelOverride.findMany();
  const map = new Map<string, ChannelOverride>();
  for (const r of rows) {
    const o = { disabled: r.disabled, weight: r.weight ?? undefined, concurrency: r.concurrency ?? undefined, tpm: r.tpm ?? undefined };
    if (isActive(o)) {
      map.set(r.channelId, {
        ...o,
        reason: r.reason,
        updatedBy: r.updatedBy,
        updatedAt: r.updatedAt.toISOString(),
      });
    }
  }
  return map;
}

async function seedRedis(client: RedisClient, map: Map<string, ChannelOverride>): Promise<void> {
  const fields: string[] = [SEEDED_FIELD, '1'];
  for (const [id, o] of map) fields.push(id, JSON.stringify(o));
  // HSETNX-like for the whole set: only while nobody seeded it (a concurrent write wins).
  await client.eval(
    "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end; redis.call('HSET', KEYS[1], unpack(ARGV)); return 1",
    1,
    OVERRIDES_KEY,
    ...fields,
  );
}

/**
 * Replaces the in-memory copy. A channel enabled again (by an operator or a passing probe) starts
 * with a closed breaker on this instance: its old failure count would otherwise disable it again.
 */
function install(next: Map<string, ChannelOverride>): void {
  const s = state();
  for (const [name, o] of s.map) {
    if (o.disabled && !next.get(name)?.disabled) recordChannelResult(name, true, getConfig());
  }
  s.map = next;
}

/** One refresh of the in-memory copy: Redis when reachable, else the database (less often). */
async function refresh(): Promise<void> {
  const s = state();
  const client = redis();
  // A copy read while this instance was changing an override may be older than the change it
  // already installed: installed, it would undo that change here until the next refresh.
  const seen = s.writes;
  const installFresh = (next: Map<string, ChannelOverride>) => {
    if (s.writing === 0 && s.writes === seen) install(next);
  };
  if (client) {
    try {
      const hash = await client.hgetall(OVERRIDES_KEY);
      if (!hash[SEEDED_FIELD]) {
        const fromDb = await readDb();
        await seedRedis(client, fromDb);
        installFresh(fromDb);
      } else installFresh(parseHash(hash));
      return;
    } catch {
      /* Redis unreachable: fall back to the database below */
    }
  }
  if (Date.now() - s.lastDbSync >= DB_SYNC_MS) {
    s.lastDbSync = Date.now();
    installFresh(await readDb());
  }
}

/** Per-instance breaker states for the console (open/closed on each instance, across the fleet). */
async function publishBreakers(): Promise<void> {
  const s = state();
  const client = redis();
  if (!client || Date.now() - s.lastBreakerPublish < 1000) return;
  s.lastBreakerPublish = Date.now();
  await client
    .set(BREAKER_KEY_PREFIX + s.instanceId, JSON.stringify({ at: Date.now(), breakers: breakerSnapshot() }), 'PX', BREAKER_TTL_MS)
    .catch(() => undefined);
}

/** Breaker states of every live instance: channel -> [{failures, open}] (one per instance that has one). */
export async function fleetBreakers(): Promise<{ instances: number; byChannel: Map<string, { failures: number; open: boolean }[]> }> {
  const byChannel = new Map<string, { failures: number; open: boolean }[]>();
  const add = (snapshot: Record<string, { failures: number; openUntil: number }>, now: number) => {
    for (const [name, b] of Object.entries(snapshot)) byChannel.set(name, [...(byChannel.get(name) ?? []), { failures: b.failures, open: b.openUntil > now }]);
  };
  const client = redis();
  if (client) {
    try {
      const keys: string[] = [];
      // On a cluster every primary holds some of the keys, each in its own slot (no MGET across them).
      for (const node of client instanceof Cluster ? client.nodes('master') : [client]) {
        let cursor = '0';
        do {
          const [next, batch] = await node.scan(cursor, 'MATCH', `${BREAKER_KEY_PREFIX}*`, 'COUNT', 200);
          cursor = next;
          keys.push(...batch);
        } while (cursor !== '0');
      }
      const values = keys.length === 0 ? [] : client instanceof Cluster ? await Promise.all(keys.map((k) => client.get(k))) : await client.mget(keys);
      let instances = 0;
      for (const v of values) {
        if (!v) continue;
        instances++;
        const parsed = JSON.parse(v) as { at: number; breakers: Record<string, { failures: number; openUntil: number }> };
        add(parsed.breakers, Date.now());
      }
      return { instances, byChannel };
    } catch {
      /* fall back to this instance's view */
    }
  }
  add(breakerSnapshot(), Date.now());
  return { instances: 1, byChannel };
}

/** Disables channels whose consecutive failures reached `auto_disable_after`; probes those it disabled. */
async function autoDisableAndProbe(): Promise<void> {
  const cfg = getConfig();
  const limit = cfg.circuitBreaker.autoDisableAfter;
  const s = state();
  if (limit) {
    for (const [name, b] of Object.entries(breakerSnapshot())) {
      // Failures of one account's requests alone never disable a channel for every tenant (breaker.ts counts each account's up to a share).
      if (b.counted < limit || s.map.get(name)?.disabled) continue;
      if (!cfg.channels.some((c) => c.name === name)) continue;
      // One instance acts (several may see the same failures at once).
      if (!(await claim(`gw:chan:auto:${name}`, 5000))) continue;
      await setChannelOverride(
        SYSTEM_ACTOR,
        name,
        { disabled: true },
        { reason: 'auto', note: `${b.failures} consecutive failures of ${b.accounts} accounts' requests (auto_disable_after: ${limit})` },
      );
      log('warn', 'channel disabled after consecutive failures', { channel: name, failures: b.failures });
    }
  }
  for (const [name, o] of s.map) {
    if (!o.disabled || o.reason !== 'auto' || s.probing.has(name)) continue;
    const channel = cfg.channels.find((c) => c.name === name);
    if (!channel) continue;
    const last = s.lastProbe.get(name) ?? Date.parse(o.updatedAt);
    if (Date.now() - last < cfg.circuitBreaker.probeIntervalMs) continue;
    s.lastProbe.set(name, Date.now());
    if (!(await claim(`gw:chan:probe:${name}`, cfg.circuitBreaker.probeIntervalMs))) continue;
    s.probing.add(name);
    void probeChannel(channel, cfg)
      .then(async (result) => {
        if (!result.ok) return;
        // Only if it is still the automatic disable (an operator may have acted since).
        if (state().map.get(name)?.reason !== 'auto') return;
        await setChannelOverride(SYSTEM_ACTOR, name, { disabled: false }, { reason: null, note: `probe passed in ${result.latencyMs} ms` });
        log('info', 'channel enabled again after a passing probe', { channel: name, latencyMs: result.latencyMs });
      })
      .catch((err) => log('warn', 'channel probe failed', { channel: name, ...errorFields(err) }))
      .finally(() => state().probing.delete(name));
  }
}

/** True for the one caller (fleet-wide with Redis) that gets the lock first. */
async function claim(key: string, ttlMs: number): Promise<boolean> {
  const client = redis();
  if (!client) return true;
  try {
    return (await client.set(key, state().instanceId, 'PX', ttlMs, 'NX')) === 'OK';
  } catch {
    return true;
  }
}

/**
 * Starts the per-process sync (idempotent), probing with `probe` (lib/gateway/probe.ts; the process
 * start passes it, a lazy start keeps the one set); the timer never keeps the process alive.
 */
export function startChannelOverrideSync(probe?: ChannelProbe): void {
  if (probe) setChannelProbe(probe);
  startChannelHealth();
  startPeriodic(
    SYNC_LOOP,
    SYNC_MS,
    async () => {
      await refresh();
      await publishBreakers();
      await autoDisableAndProbe();
    },
    { runNow: true, logEveryFailure: true },
  );
}

export interface OverrideChange {
  disabled?: boolean;
  /** A number sets the weight override; null removes it. */
  weight?: number | null;
  /** A number sets the limit over the config's; null goes back to the config's (CHANNEL_LIMIT_BOUNDS). */
  concurrency?: number | null;
  tpm?: number | null;
}

/**
 * Sets a channel's runtime state: the database row and its audit entry in one transaction, then the
 * shared copy in Redis and this instance's copy at once.
 */
export async function setChannelOverride(
  actor: Actor,
  channelId: string,
  change: OverrideChange,
  opts: { reason?: string | null; note?: string } = {},
): Promise<ChannelOverride | undefined> {
  const s = state();
  s.writing++;
  try {
    return await writeChannelOverride(actor, channelId, change, opts);
  } finally {
    s.writing--;
    s.writes++;
  }
}

async function writeChannelOverride(
  actor: Actor,
  channelId: string,
  change: OverrideChange,
  opts: { reason?: string | null; note?: string },
): Promise<ChannelOverride | undefined> {
  if (!getConfig().channels.some((c) => c.name === channelId)) throw new GatewayError('not_found', 'No such channel.');
  if (change.weight !== undefined && change.weight !== null && (!Number.isInteger(change.weight) || change.weight < 0 || change.weight > 1_000_000)) {
    throw new GatewayError('invalid_request', 'The weight must be an integer from 0 to 1000000.', { param: 'weight' });
  }
  for (const field of ['concurrency', 'tpm'] as const) {
    const v: unknown = change[field];
    const { min, max } = CHANNEL_LIMIT_BOUNDS[field];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max))
      throw codedError('invalid_request', 'admin.channel_limit', { field, min, max }, { param: field });
  }
  const db = await getDb();
  const row = await db.$transaction(async (tx) => {
    const before = await tx.channelOverride.findUnique({ where: { channelId } });
    const disabled = change.disabled ?? before?.disabled ?? false;
    const weight = change.weight === undefined ? (before?.weight ?? null) : change.weight;
    const concurrency = change.concurrency === undefined ? (before?.concurrency ?? null) : change.concurrency;
    const tpm = change.tpm === undefined ? (before?.tpm ?? null) : change.tpm;
    const reason = disabled ? (opts.reason !== undefined ? opts.reason : change.disabled === true ? 'manual' : (before?.reason ?? 'manual')) : null;
    const data = { disabled, weight, concurrency, tpm, reason, updatedBy: actor.label, updatedAt: new Date() };
    const after = await tx.channelOverride.upsert({ where: { channelId }, create: { channelId, ...data }, update: data });
    const action =
      change.disabled === true && !before?.disabled
        ? 'channel.disable'
        : change.disabled === false && before?.disabled
          ? 'channel.enable'
          : change.concurrency !== undefined || change.tpm !== undefined
            ? 'channel.set_limits'
            : 'channel.set_weight';
    await writeAudit(
      actor,
      {
        action,
        targetType: 'channel',
        targetId: channelId,
        before: before
          ? { disabled: before.disabled, weight: before.weight, concurrency: before.concurrency, tpm: before.tpm, reason: before.reason }
          : { disabled: false, weight: null, concurrency: null, tpm: null },
        after: { disabled: after.disabled, weight: after.weight, concurrency: after.concurrency, tpm: after.tpm, reason: after.reason },
        note: opts.note,
      },
      tx,
    );
    return after;
  });
  const value: ChannelOverride = {
    disabled: row.disabled,
    weight: row.weight ?? undefined,
    concurrency: row.concurrency ?? undefined,
    tpm: row.tpm ?? undefined,
    reason: row.reason,
    updatedBy: row.updatedBy,
    updatedAt: row.updatedAt.toISOString(),
  };
  const active = isActive(value);
  const next = new Map(state().map);
  if (active) next.set(channelId, value);
  else next.delete(channelId);
  install(next);
  const client = redis();
  if (client) {
    try {
      if (active) await client.hset(OVERRIDES_KEY, channelId, JSON.stringify(value));
      else await client.hdel(OVERRIDES_KEY, channelId);
    } catch (err) {
      // The database has it: instances re-read it there while Redis is unreachable, and a flushed
      // Redis is refilled from it.
      log('warn', 'channel override not shared through Redis', { channel: channelId, ...errorFields(err) });
    }
  }
  return active ? value : undefined;
}

/** The current overrides (this instance's copy, refreshed first). */
export async function listChannelOverrides(): Promise<Map<string, ChannelOverride>> {
  if (!periodicRunning(SYNC_LOOP)) startChannelOverrideSync();
  await refresh().catch(() => undefined);
  return new Map(state().map);
}
