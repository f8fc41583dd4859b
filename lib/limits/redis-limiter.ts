// Redis-backed limiter shared by every gateway instance.
// Each operation is ONE Lua script (one round trip, atomic on the server). admit() first
// checks every rule without changing anything that matters, then the balance, and only
// when everything passes applies all mutations. Time comes from the Redis server
// (TIME) so instances with skewed clocks still agree on windows and leases.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { hashTag } from './keys';
import { sendEncoded, type Arg } from './resp';
import { windowCount, windowShape } from './memory-limiter';
import type { AdmitInput, AdmitResult, Limiter, ReleaseInput, Rule, RuleState, UsageRule } from './types';

export { encodeCommand } from './resp';

/** A single Redis or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;

/** Sub-buckets per window rule (as the in-process limiter's; see check_window). */
const WINDOW_BUCKETS = 60;

// The scripts live in lib/limits/lua/*.lua, read once at start from the project root: the working
// directory of every entry point (npm start, next start, the tests and benchmarks), as for Next itself.
const LUA_DIR = path.join(process.cwd(), 'lib/limits/lua');

/** A script made of the given parts, in order ({{WINDOW_BUCKETS}} filled in). */
function lua(...parts: string[]): string {
  const source = parts.map((part) => readFileSync(path.join(LUA_DIR, `${part}.lua`), 'utf8')).join('');
  return source.replaceAll('{{WINDOW_BUCKETS}}', String(WINDOW_BUCKETS));
}

// Shared Lua prelude (lua/prelude.lua): server time in fractional milliseconds and small helpers.
// An admission's time in Redis is mostly the Lua around its commands (`npm run bench:redis-script`
// counts it under callgrind; docs/decisions/005-admission-script-cost.md): every object a script makes, every
// table that grows, every number converted to or from text (Redis 7.0 formats Lua numbers with
// printf, scores and tonumber go through strtod) and every SET (its reply becomes a Lua table) cost
// more than most calls. So the scripts read every plain value with one MGET, write GCRA states once
// per batch, hand redis.call integer text, keep sorted-set scores whole and read the clock only when
// an operation needs it.

// KEYS[1..n]: rule keys; KEYS[n+1..n+3]: balance, reservation and gone keys when a reservation is
// requested, then the same three for each budget (AdmitInput.budgets); then the deny keys.
// ARGV: leaseId, leaseTtlMs, n, reserve amount ('' for none), deny key count, then per rule: kind,
// limit, windowMs; then the budget count and per budget its threshold (amount - cap: the counter,
// minus the spend, must stay at or above it); then, with a tokens rule, the token reservation.
// Reply: {status, refusedIndex, retryAfterMs, balance, remaining1, reset1, ...}; balance: on status 2
// the balance available, on status 1 the balance before this reservation ('' without one).
//   status 1 = admitted, 0 = refused by a rule, 2 = insufficient balance, 3 = balance not loaded,
//   4 = a deny key exists (refusedIndex: which one).
// ADMIT_CORE defines admit_one(ko, ao): the item's KEYS and ARGV start after those offsets (a batch
// reads its items in place rather than copying them into tables of their own, ~10 % of a pair's
// work in Redis); the helpers read the current item's lease and ttl.
// admit_one: lib/limits/lua/admit-core.lua.
const ADMIT_LUA = lua('prelude', 'admit-core', 'admit');

// KEYS: concurrency keys (ARGV[2] of them), the settle key when ARGV[3] ~= '' (with its reservation
// and gone keys when ARGV[4] ~= ''), then each budget's counter, reservation and gone keys, then
// quota keys.
// The settle key's charge marker follows them when ARGV[6] ~= '' (ReleaseInput.chargeId).
// ARGV: leaseId, concurrency key count, settle delta ('' for none), reserved ('' for a plain
// settlement), budget count, the charge marker's lifetime in ms ('' for none), per budget its delta
// and reserved, then windowMs, amount per quota key.
// release_one(ko, ao, nk): the item's KEYS and ARGV start after the offsets; nk: its key count.
// release_one: lib/limits/lua/release-core.lua.
const RELEASE_LUA = lua('prelude', 'release-core', 'release');

// Several admits and releases issued in the same event-loop turn, in one script call, in order
// (each one atomic as on its own; they share the call's clock reading).
// ARGV[1]: item count; then per item: type ('a' admit, 'r' release), key count, arg count, args.
// KEYS: every item's keys, in item order. Reply: one entry per item, as the single scripts reply.
const BATCH_LUA = lua('prelude', 'admit-core', 'release-core', 'batch');

// KEYS: concurrency keys, then the reservation key when ARGV[3] ~= ''. ARGV: leaseId, leaseTtlMs,
// reservation member ('leaseId|amount', or ''). Only still-live leases are extended.
const RENEW_LUA = lua('prelude', 'renew');

// KEYS: balance, reservation and gone keys. Forgets the balance (it is reloaded from the database,
// which has none of the open reservations): its open reservations are gone, so their settlements
// charge only their cost. With ARGV[1] (an amount): loads the balance instead, if not loaded (SET NX),
// and marks the pending credits it includes applied (KEYS[4..]: their markers; ARGV[2]: their lifetime).
const RELOAD_LUA = lua('prelude', 'reload');

// KEYS: the credit's applied marker, the balance key, the balance's late credits. ARGV: delta,
// marker lifetime (ms), entry id, late lifetime (ms). Applies a credit ledger entry once: the first
// call sets the marker and adds to the balance if it is loaded. An unloaded balance will load from
// the database, but a load already under way may have read it before this credit committed: the
// credit is kept in the late hash, and the load adds it unless its read included it (RELOAD_LUA).
// The marker is set last: Redis does not undo a script's writes when a later command fails, so a
// failing INCRBY (an overflow) must leave the credit unmarked, to be tried again.
const CREDIT_LUA = lua('credit');

// KEYS[1]: balance key. ARGV[1]: delta. No-op when the balance is not loaded.
const ADJUST_LUA = lua('adjust');

// Undoes the window and GCRA counts of an admission (Redis Cluster: one part of an admission split
// over slots was refused, so the parts that admitted are taken back; leases and reservations go by
// release). KEYS: the rule keys. ARGV: the admission's TIME (seconds, microseconds), then per key
// kind ('window' or 'gcra'), limit, windowMs.
const UNDO_LUA = lua('undo');

/** A Lua script run by EVALSHA, falling back to EVAL once when the server lacks it. */
class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  run(redis: RedisClient, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.runSegments(redis, keys.length, [keys, args], keys[0]);
  }

  /** Runs with the keys, then the arguments, given as segments (`numKeys` of them keys, all in routeKey's slot). */
  runSegments(redis: RedisClient, numKeys: number, segments: readonly (readonly Arg[])[], routeKey?: string): Promise<unknown> {
    return sendEncoded(redis, 'evalsha', [[this.sha, numKeys], ...segments], routeKey).catch((err: unknown) => {
      if (!isNoScriptError(err)) throw err;
      return sendEncoded(redis, 'eval', [[this.source, numKeys], ...segments], routeKey);
    });
  }
}

const admitScript = new LuaScript(ADMIT_LUA);
const releaseScript = new LuaScript(RELEASE_LUA);
const renewScript = new LuaScript(RENEW_LUA);
const adjustScript = new LuaScript(ADJUST_LUA);
const reloadScript = new LuaScript(RELOAD_LUA);
const creditScript = new LuaScript(CREDIT_LUA);
const undoScript = new LuaScript(UNDO_LUA);

/** The sorted set of a balance's reservation leases ('leaseId|amount' scored by expiry). */
export const reservationsKey = (balanceKey: string) => `${balanceKey}:res`;
/** Reservations returned to the balance unsettled (expired, or the balance reloaded): 'leaseId|amount'. */
export const goneReservationsKey = (balanceKey: string) => `${balanceKey}:gone`;
/** Credits applied while the balance was not loaded, for the load under way (CREDIT_LUA). */
export const lateCreditsKey = (balanceKey: string) => `${balanceKey}:late`;
/** How long a late credit waits for a load: far longer than one load takes. */
export const LATE_CREDIT_MS = 10 * 60_000;
/** Marks a credit ledger entry as applied to the live balance. */
// Under the balance's key: ledger ids are a database sequence, so a database restored or replaced
// (a test run's) reuses them, and a marker by id alone would make a new credit look applied.
export const creditMarkerKey = (balanceKey: string, entryId: string) => `${balanceKey}:applied:${entryId}`;
/** Marks a charge (ReleaseInput.chargeId) as settled on the live balance. */
export const chargeMarkerKey = (balanceKey: string, chargeId: string) => `${balanceKey}:charged:${chargeId}`;
/** How long a charge marker is kept: past the 24 h window in which a batch's lines can run. */
export const CHARGE_MARKER_MS = 26 * 3_600_000;
/** How long an applied marker is kept: far longer than any credit can stay pending in the database. */
const CREDIT_MARKER_MS = 30 * 86_400_000;
const batchScript = new LuaScript(BATCH_LUA);

/** Most admits and releases one batch call carries (bounds the script's run time in Redis). */
const MAX_BATCH_ITEMS = 100;

interface Queued {
  type: 'a' | 'r';
  keys: string[];
  args: (string | number)[];
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/** One slot's part of an admission on Redis Cluster: the input's rules, reservation and deny keys there. */
interface AdmitPart {
  input: AdmitInput;
  /** Positions of its rules and deny keys in the whole admission's. */
  ruleIndex: number[];
  denyIndex: number[];
}

export class RedisLimiter implements Limiter {
  readonly client: RedisClient;
  /**
   * A Redis Cluster: every call is split by hash tag so that each script call touches one slot
   * (an account's keys share its tag, lib/limits/keys.ts); the parts of one admission go in
   * parallel and those that admitted are undone when another refuses.
   */
  readonly cluster: boolean;
  /** Only a client we created ourselves is closed by close(). */
  private readonly ownsClient: boolean;

  /**
   * @param client an ioredis client (or Cluster), or a URL to create one from.
   * @param options.ownsClient close the client in close(); defaults to true only for a URL.
   */
  constructor(client: RedisClient | string, options: { ownsClient?: boolean } = {}) {
    this.ownsClient = options.ownsClient ?? typeof client === 'string';
    this.client = typeof client === 'string' ? new Redis(client) : client;
    this.cluster = this.client instanceof Cluster;
    // Commands are encoded here (EncodedCommand), so ioredis's key prefixing would not apply.
    const prefix =
      this.client instanceof Cluster ? (this.client.options.keyPrefix ?? this.client.options.redisOptions?.keyPrefix) : this.client.options.keyPrefix;
    if (prefix) throw new Error('RedisLimiter does not support a client with keyPrefix');
  }

  /** Calls queued for the end of this event-loop turn, by hash tag (one batch per slot; one group on a single Redis). */
  private queues = new Map<string, Queued[]>();
  private flushScheduled = false;

  /**
   * Admits and releases issued in the same event-loop turn (the admissions of requests read
   * together, the releases of replies just sent) travel as ONE script call when the turn ends:
   * one command, one socket write, one Lua invocation, instead of one each (on a cluster, one per
   * slot). An urgent call goes out at once, with whatever is queued so far (see AdmitInput.urgent).
   */
  private enqueue(type: 'a' | 'r', keys: string[], args: (string | number)[], urgent = false): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const tag = this.cluster ? hashTag(keys[0]) : '';
      let queue = this.queues.get(tag);
      if (!queue) this.queues.set(tag, (queue = []));
      queue.push({ type, keys, args, resolve, reject });
      if (urgent) return this.sendQueued();
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.sendQueued();
      });
    });
  }

  /** Sends everything queued (a flush scheduled before an urgent call may find nothing left). */
  private sendQueued(): void {
    const queues = this.queues;
    this.queues = new Map();
    for (const all of queues.values()) {
      for (let i = 0; i < all.length; i += MAX_BATCH_ITEMS) this.send(all.slice(i, i + MAX_BATCH_ITEMS));
    }
  }

  private send(items: Queued[]): void {
    if (items.length === 1) {
      const it = items[0];
      (it.type === 'a' ? admitScript : releaseScript).run(this.client, it.keys, it.args).then(it.resolve, it.reject);
      return;
    }
    // KEYS: every item's keys in order; ARGV: the item count, then per item its header and arguments.
    const segments: (readonly Arg[])[] = [];
    let numKeys = 0;
    for (const it of items) {
      segments.push(it.keys);
      numKeys += it.keys.length;
    }
    segments.push([items.length]);
    for (const it of items) segments.push([it.type, it.keys.length, it.args.length], it.args);
    batchScript.runSegments(this.client, numKeys, segments, items[0].keys[0]).then(
      (replies) => {
        items.forEach((it, i) => {
          const reply = (replies as unknown[])[i];
          if (reply instanceof Error) it.reject(reply);
          else it.resolve(reply);
        });
      },
      (err) => {
        for (const it of items) it.reject(err);
      },
    );
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    if (this.cluster) {
      const parts = splitAdmission(input);
      if (parts.length > 1) return this.admitParts(input, parts);
    }
    return this.admitRaw(input).then((reply) => decodeAdmitReply(reply, input.rules, input.reserve?.amount ?? 0n));
  }

  /** One script call's admission (all its keys in one slot on a cluster); the raw reply. */
  private admitRaw(input: AdmitInput): Promise<unknown> {
    const keys = input.rules.map((r) => r.key);
    if (input.reserve) keys.push(input.reserve.key, reservationsKey(input.reserve.key), goneReservationsKey(input.reserve.key));
    const deny = input.denyKeys ?? [];
    for (const k of deny) keys.push(k);
    const args: (string | number)[] = [input.leaseId, input.leaseTtlMs, input.rules.length, input.reserve ? input.reserve.amount.toString() : '', deny.length];
    for (const rule of input.rules) {
      // 'rwindow': a requests window, whose exact remaining count and reset feed the response headers.
      const kind = rule.kind === 'window' && rule.requests ? 'rwindow' : rule.kind;
      args.push(kind, rule.limit, rule.kind === 'concurrency' ? 0 : rule.windowMs);
    }
    const budgets = input.reserve ? (input.budgets ?? []) : [];
    args.push(budgets.length);
    if (budgets.length > 0) {
      // Budget keys go between the balance's and the deny keys.
      const budgetKeys: string[] = [];
      for (const b of budgets) {
        budgetKeys.push(b.key, reservationsKey(b.key), goneReservationsKey(b.key));
        args.push((input.reserve!.amount - b.cap).toString());
      }
      keys.splice(keys.length - deny.length, 0, ...budgetKeys);
    }
    // What a tokens rule counts: read by the script only when the admission has one.
    if (input.tokens !== undefined) args.push(Math.max(0, Math.round(input.tokens)));
    return this.enqueue('a', keys, args, input.urgent);
  }

  /**
   * An admission over several slots (Redis Cluster): the account's part, the shared layers' (the
   * global rate, a model's caps, each on its own slot) and the key's deny markers, sent together.
   * Each part is exact on its own slot; when one refuses, the parts that admitted are undone (their
   * counts taken back, leases and reservation released), so a refusal leaves nothing counted
   * except, for the moment between, a slot another admission may have been refused for.
   */
  private async admitParts(input: AdmitInput, parts: AdmitPart[]): Promise<AdmitResult> {
    const settled = await Promise.allSettled(parts.map((p) => this.admitRaw(p.input)));
    const decoded: (AdmitResult | undefined)[] = settled.map((r, i) =>
      r.status === 'fulfilled' ? decodeAdmitReply(r.value, parts[i].input.rules, parts[i].input.reserve?.amount ?? 0n) : undefined,
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const states: RuleState[] = new Array<RuleState>(input.rules.length);
    let refusal: Refusal | undefined;
    let balance: bigint | undefined;
    decoded.forEach((d, i) => {
      if (!d) return;
      const part = parts[i];
      if (d.ok) {
        d.states.forEach((st, j) => (states[part.ruleIndex[j]] = st));
        if (d.balance !== undefined) balance = d.balance;
        return;
      }
      if (d.reason === 'limit') d.states.forEach((st, j) => (states[part.ruleIndex[j]] = st));
      // A part's rules are the admission's own objects; its deny index is mapped back.
      const mapped: Refusal = d.reason === 'denied' ? { ok: false, reason: 'denied', index: part.denyIndex[d.index] } : d;
      if (!refusal || worseRefusal(mapped, refusal)) refusal = mapped;
    });
    if (!failed && !refusal) return balance === undefined ? { ok: true, states } : { ok: true, states, balance };
    // Undo what the other parts admitted (not awaited by the caller's answer beyond this call).
    await Promise.all(
      decoded.map((d, i) => {
        if (!d?.ok) return undefined;
        const reply = (settled[i] as PromiseFulfilledResult<unknown>).value as unknown[];
        return this.undoPart(parts[i].input, reply).catch(() => undefined);
      }),
    );
    if (failed) throw failed.reason;
    if (refusal!.reason === 'limit') {
      for (let i = 0; i < states.length; i++) states[i] ??= { rule: input.rules[i], limit: input.rules[i].limit, remaining: input.rules[i].limit, resetMs: 0 };
      return { ...refusal!, states };
    }
    return refusal!;
  }

  /** Takes back an admitted part: window and GCRA counts by UNDO_LUA, leases and reservation by release. */
  private async undoPart(part: AdmitInput, reply: unknown[]): Promise<void> {
    const n = part.rules.length;
    const sec = reply[4 + 2 * n] as string;
    const usec = reply[5 + 2 * n] as string;
    const counted = part.rules.filter((r) => r.kind === 'window' || r.kind === 'gcra');
    const calls: Promise<unknown>[] = [];
    if (counted.length > 0) {
      const args: Arg[] = [sec, usec];
      for (const r of counted) args.push(r.kind, r.limit, r.windowMs);
      calls.push(
        undoScript.run(
          this.client,
          counted.map((r) => r.key),
          args,
        ),
      );
    }
    const concurrencyKeys = part.rules.filter((r) => r.kind === 'concurrency').map((r) => r.key);
    const reserve = part.reserve;
    // Token reservations are taken back as a settlement of nothing used, in the bucket they were counted in.
    const at = Number(sec) * 1000 + Number(usec) / 1000;
    const tokens = part.rules.filter((r) => r.kind === 'tokens').map((r) => ({ key: r.key, windowMs: r.windowMs, at, delta: -(part.tokens ?? 0) }));
    if (concurrencyKeys.length > 0 || reserve || tokens.length > 0) {
      calls.push(
        this.release({
          leaseId: part.leaseId,
          concurrencyKeys,
          tokens,
          settle: reserve ? { key: reserve.key, delta: reserve.amount, reserved: reserve.amount } : undefined,
          budgets: reserve ? (part.budgets ?? []).map((b) => ({ key: b.key, delta: reserve.amount, reserved: reserve.amount })) : undefined,
          urgent: true,
        }),
      );
    }
    await Promise.all(calls);
  }

  async release(input: ReleaseInput): Promise<void> {
    if (this.cluster) {
      const parts = splitRelease(input);
      if (parts.length > 1) {
        await Promise.all(parts.map((p) => this.releaseRaw(p)));
        return;
      }
    }
    await this.releaseRaw(input);
  }

  private async releaseRaw(input: ReleaseInput): Promise<void> {
    const keys = [...input.concurrencyKeys];
    // A reservation lease is settled even at delta 0 (its lease must go); a plain settlement of 0 is nothing.
    const settle = input.settle && (input.settle.delta !== 0n || input.settle.reserved !== undefined) ? input.settle : undefined;
    const leased = settle?.reserved !== undefined;
    if (settle) keys.push(settle.key);
    if (settle && leased) keys.push(reservationsKey(settle.key), goneReservationsKey(settle.key));
    const once = settle && input.chargeId !== undefined;
    if (once) keys.push(chargeMarkerKey(settle.key, input.chargeId!));
    const budgets = input.budgets ?? [];
    const args: (string | number)[] = [
      input.leaseId,
      input.concurrencyKeys.length,
      settle ? settle.delta.toString() : '',
      settle && leased ? String(settle.reserved) : '',
      budgets.length,
      once ? CHARGE_MARKER_MS : '',
    ];
    for (const b of budgets) {
      keys.push(b.key, reservationsKey(b.key), goneReservationsKey(b.key));
      args.push(b.delta.toString(), b.reserved.toString());
    }
    for (const u of input.usage ?? []) {
      if (u.amount === 0) continue;
      keys.push(u.key);
      args.push(u.windowMs, Math.round(u.amount));
    }
    // Token settlements travel as quota items whose window is 't<bucket>' (release-core.lua's settle_tokens).
    for (const t of input.tokens ?? []) {
      const delta = Math.round(t.delta);
      if (delta === 0) continue;
      keys.push(t.key);
      args.push(`t${Math.floor(t.at / windowShape(t.windowMs).g)}`, delta);
    }
    if (keys.length === 0) return;
    await this.enqueue('r', keys, args, input.urgent);
  }

  async renew(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void> {
    const leased = reservation !== undefined && reservation.amount !== 0n;
    if (concurrencyKeys.length === 0 && !leased) return;
    if (this.cluster) {
      const byTag = groupBy(concurrencyKeys, hashTag);
      const resTag = leased ? hashTag(reservation.key) : undefined;
      if (resTag !== undefined && !byTag.has(resTag)) byTag.set(resTag, []);
      if (byTag.size > 1) {
        await Promise.all([...byTag].map(([tag, keys]) => this.renewRaw(keys, leaseId, leaseTtlMs, tag === resTag ? reservation : undefined)));
        return;
      }
    }
    await this.renewRaw(concurrencyKeys, leaseId, leaseTtlMs, leased ? reservation : undefined);
  }

  private async renewRaw(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void> {
    const leased = reservation !== undefined && reservation.amount !== 0n;
    if (concurrencyKeys.length === 0 && !leased) return;
    const keys = leased ? [...concurrencyKeys, reservationsKey(reservation.key)] : concurrencyKeys;
    await renewScript.run(this.client, keys, [leaseId, leaseTtlMs, leased ? `${leaseId}|${reservation.amount}` : '']);
  }

  async initBalance(key: string, amount: bigint, credits: string[] = [], included: string[] = credits, ttlMs?: number): Promise<void> {
    const keys = [key, reservationsKey(key), goneReservationsKey(key), lateCreditsKey(key), ...credits.map((id) => creditMarkerKey(key, id))];
    await reloadScript.run(this.client, keys, [amount.toString(), CREDIT_MARKER_MS, ...included]);
    // Loads only (not the hot path): a second command rather than another argument of the script.
    if (ttlMs !== undefined) await sendEncoded(this.client, 'pexpire', [[key, Math.ceil(ttlMs)]], key);
  }

  async applyCredit(entryId: string, key: string, delta: bigint): Promise<boolean> {
    await creditScript.run(
      this.client,
      [creditMarkerKey(key, entryId), key, lateCreditsKey(key)],
      [delta.toString(), CREDIT_MARKER_MS, entryId, LATE_CREDIT_MS],
    );
    return true;
  }

  async adjustBalance(key: string, delta: bigint): Promise<void> {
    await adjustScript.run(this.client, [key], [delta.toString()]);
  }

  async forgetBalance(key: string): Promise<void> {
    await reloadScript.run(this.client, [key, reservationsKey(key), goneReservationsKey(key)], []);
  }

  async denied(keys: string[]): Promise<number> {
    if (keys.length === 0) return -1;
    if (this.cluster) {
      // One GET per key (each its own slot, in parallel): markers are few and this is off the hot path.
      const values = await Promise.all(keys.map((k) => sendEncoded(this.client, 'get', [[k]], k)));
      return values.findIndex((v) => v !== null);
    }
    const values = (await sendEncoded(this.client, 'mget', [keys])) as (string | null)[];
    return values.findIndex((v) => v !== null);
  }

  /**
   * Read-only, one command per rule (each key in its own slot on a cluster), at the server's clock:
   * a concurrency set's leases not yet expired (scored by expiry), a window's buckets still inside.
   */
  async usage(rules: readonly UsageRule[]): Promise<number[]> {
    if (rules.length === 0) return [];
    const [sec, usec] = await this.client.time();
    const now = Number(sec) * 1000 + Number(usec) / 1000;
    return Promise.all(
      rules.map(async (rule) => {
        if (rule.kind === 'concurrency') return this.client.zcount(rule.key, `(${Math.floor(now)}`, '+inf');
        const hash = await this.client.hgetall(rule.key);
        // Bucket fields are the bucket index; 'n' and 'lo' are the window's running state.
        const buckets = Object.entries(hash).flatMap(([field, count]): [number, number][] => (/^\d+$/.test(field) ? [[Number(field), Number(count)]] : []));
        return windowCount(buckets, rule.windowMs, now);
      }),
    );
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    try {
      await this.client.quit();
    } catch {
      // Already disconnected (e.g. Redis down): drop the socket and stop reconnecting.
      this.client.disconnect();
    }
  }
}

function groupBy<T>(items: readonly T[], tagOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const tag = tagOf(item);
    const group = out.get(tag);
    if (group) group.push(item);
    else out.set(tag, [item]);
  }
  return out;
}

/** The parts of an admission by hash tag: rules, the reservation (with its budgets: the account's) and deny keys. */
function splitAdmission(input: AdmitInput): AdmitPart[] {
  const parts = new Map<string, AdmitPart>();
  const partOf = (tag: string): AdmitPart => {
    let p = parts.get(tag);
    if (!p)
      parts.set(
        tag,
        (p = {
          input: { rules: [], leaseId: input.leaseId, leaseTtlMs: input.leaseTtlMs, denyKeys: [], urgent: input.urgent, tokens: input.tokens },
          ruleIndex: [],
          denyIndex: [],
        }),
      );
    return p;
  };
  input.rules.forEach((rule, i) => {
    const p = partOf(hashTag(rule.key));
    p.input.rules.push(rule);
    p.ruleIndex.push(i);
  });
  if (input.reserve) {
    const p = partOf(hashTag(input.reserve.key));
    p.input.reserve = input.reserve;
    if (input.budgets) p.input.budgets = input.budgets;
  }
  (input.denyKeys ?? []).forEach((key, i) => {
    const p = partOf(hashTag(key));
    p.input.denyKeys!.push(key);
    p.denyIndex.push(i);
  });
  return [...parts.values()];
}

/** A release by hash tag: concurrency and quota keys where they are, the settlements with the balance. */
function splitRelease(input: ReleaseInput): ReleaseInput[] {
  const parts = new Map<string, ReleaseInput>();
  const partOf = (tag: string): ReleaseInput => {
    let p = parts.get(tag);
    if (!p) parts.set(tag, (p = { leaseId: input.leaseId, concurrencyKeys: [], urgent: input.urgent }));
    return p;
  };
  for (const key of input.concurrencyKeys) partOf(hashTag(key)).concurrencyKeys.push(key);
  if (input.settle) {
    const p = partOf(hashTag(input.settle.key));
    p.settle = input.settle;
    p.chargeId = input.chargeId;
    if (input.budgets) p.budgets = input.budgets;
  } else if (input.budgets?.length) {
    partOf(hashTag(input.budgets[0].key)).budgets = input.budgets;
  }
  for (const u of input.usage ?? []) (partOf(hashTag(u.key)).usage ??= []).push(u);
  for (const t of input.tokens ?? []) (partOf(hashTag(t.key)).tokens ??= []).push(t);
  return [...parts.values()];
}

type Refusal = Exclude<AdmitResult, { ok: true }>;

/** Which refusal of a split admission is reported: a deny marker, then the longest limit wait, then the balance. */
function worseRefusal(a: Refusal, b: Refusal): boolean {
  const rank = (r: Refusal) => (r.reason === 'denied' ? 4 : r.reason === 'limit' ? 3 : r.reason === 'balance_unknown' ? 2 : 1);
  if (rank(a) !== rank(b)) return rank(a) > rank(b);
  return a.reason === 'limit' && b.reason === 'limit' && a.retryAfterMs > b.retryAfterMs;
}

function decodeAdmitReply(reply: unknown, rules: Rule[], reserved: bigint): AdmitResult {
  if (!Array.isArray(reply)) throw new Error(`unexpected limiter reply: ${JSON.stringify(reply)}`);
  const [status, index, retryAfterMs, available] = reply as [number, number, number, string];
  switch (status) {
    case 1:
      return available
        ? { ok: true, states: decodeStates(reply, rules), balance: BigInt(available) - reserved }
        : { ok: true, states: decodeStates(reply, rules) };
    case 0:
      return { ok: false, reason: 'limit', rule: rules[index], retryAfterMs, states: decodeStates(reply, rules) };
    case 2:
      return index ? { ok: false, reason: 'balance', available: BigInt(available), index } : { ok: false, reason: 'balance', available: BigInt(available) };
    case 3:
      return index ? { ok: false, reason: 'balance_unknown', index } : { ok: false, reason: 'balance_unknown' };
    case 4:
      return { ok: false, reason: 'denied', index };
    default:
      throw new Error(`unexpected limiter status: ${String(status)}`);
  }
}

function decodeStates(reply: unknown[], rules: Rule[]): RuleState[] {
  const states = rules.map((rule, i) => ({
    rule,
    limit: rule.limit,
    remaining: Number(reply[4 + 2 * i]),
    resetMs: Number(reply[5 + 2 * i]),
  }));
  // An admitted tokens rule: the server's clock when it was counted (TIME, after the rules), for its settlement.
  if (reply[0] === 1) {
    const n = rules.length;
    for (let i = 0; i < n; i++) {
      if (rules[i].kind !== 'tokens') continue;
      (states[i] as RuleState).at = Number(reply[4 + 2 * n]) * 1000 + Number(reply[5 + 2 * n]) / 1000;
    }
  }
  return states;
}

function isNoScriptError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}
