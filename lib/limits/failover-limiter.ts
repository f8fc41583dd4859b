// Redis limiter with an in-process fallback.
// Rate limiting must never take the gateway down: when Redis is unreachable or slow,
// requests are limited per instance by a MemoryLimiter (looser across instances, but
// still bounded) until Redis is ready again. Every call is bounded in time and never throws.

import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { MemoryLimiter } from './memory-limiter';
import { RedisLimiter, type RedisClient } from './redis-limiter';
import type { AdmitInput, AdmitResult, Limiter, ReleaseInput, Rule, UsageRule } from './types';

/** Client options that make Redis failures fast instead of queued or retried. */
export const FAILOVER_REDIS_OPTIONS: RedisOptions = {
  // Fail immediately while disconnected instead of queueing until reconnect.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  // Generous: a loaded machine can take 100+ ms for a healthy Redis, and falling back splits the limit per instance.
  commandTimeout: 1_000,
  connectTimeout: 1_000,
  // Keep trying forever, every 500 ms, so we return to Redis soon after it is back.
  retryStrategy: () => 500,
};

export type LimiterLogEntry = { level: 'info' | 'warn' | 'error'; msg: string } & Record<string, unknown>;

export interface FailoverLimiterOptions {
  memory?: MemoryLimiter;
  /** Hard bound on the probe and resync calls (request-path calls are bounded by ioredis commandTimeout). */
  callTimeoutMs?: number;
  /** How long a call waits for a (re)connecting client before using the fallback. */
  connectGraceMs?: number;
  /** While on fallback with the client still connected, how often Redis is probed. */
  probeIntervalMs?: number;
  /** Bound on the leases admitted in memory that are remembered for release routing. */
  maxTrackedLeases?: number;
  /** Bound on the settlements of Redis reservations kept, while Redis is unreachable, to be sent when it is back. */
  maxPendingSettlements?: number;
  /** How long applyCredit waits for a (re)connecting client (credits are off the request path). */
  creditConnectGraceMs?: number;
  /** Close the Redis client in close(). */
  ownsClient?: boolean;
  /**
   * What an admission gets while Redis cannot answer it: `memory` (default) the in-process limits
   * (per instance, so looser across instances); `refuse` a limit refusal with a short Retry-After,
   * so that nothing is over-admitted while part of a Redis Cluster fails over (a few seconds).
   */
  outage?: 'memory' | 'refuse';
  log?: (entry: LimiterLogEntry) => void;
}

const DEFAULTS = {
  callTimeoutMs: 1_100,
  connectGraceMs: 100,
  probeIntervalMs: 500,
  maxTrackedLeases: 100_000,
  maxPendingSettlements: 100_000,
  creditConnectGraceMs: 3_000,
};

class LimiterTimeoutError extends Error {
  constructor(ms: number) {
    super(`limiter call timed out after ${ms} ms`);
    this.name = 'LimiterTimeoutError';
  }
}

export class FailoverLimiter implements Limiter {
  readonly redis: RedisLimiter;
  readonly memory: MemoryLimiter;
  private readonly client: RedisClient;
  private readonly options: typeof DEFAULTS;
  private readonly ownsClient: boolean;
  private readonly log: (entry: LimiterLogEntry) => void;
  private readonly outage: 'memory' | 'refuse';
  /** Leases admitted by the memory limiter: their release must go there too. */
  private readonly memoryLeases = new Set<string>();
  /**
   * Settlements of reservations taken in Redis that could not reach it: sent again when Redis is
   * back (a settlement with `reserved` is exact however often it is sent, see ReleaseInput.settle).
   */
  private pendingSettlements: ReleaseInput[] = [];
  private fallback = false;
  private fallbackCalls = 0;
  private outages = 0;
  private outageStartedAt = 0;
  private probeTimer: NodeJS.Timeout | undefined;
  private readyWaiter: Promise<void> | undefined;
  private closed = false;
  private readonly onReady = () => this.recover('ready');
  // ioredis prints every connection error unless someone listens; outages are logged once below.
  private readonly onError = () => {};

  /** A FailoverLimiter owning a fresh client configured with FAILOVER_REDIS_OPTIONS. */
  static fromUrl(url: string, options: FailoverLimiterOptions = {}): FailoverLimiter {
    const client = new Redis(url, FAILOVER_REDIS_OPTIONS);
    return new FailoverLimiter(new RedisLimiter(client), { ownsClient: true, ...options });
  }

  /** A FailoverLimiter owning a fresh Redis Cluster client (its nodes configured with FAILOVER_REDIS_OPTIONS). */
  static fromClusterNodes(nodes: { host: string; port: number }[], options: FailoverLimiterOptions = {}): FailoverLimiter {
    const client = new Cluster(nodes, {
      redisOptions: FAILOVER_REDIS_OPTIONS,
      enableOfflineQueue: false,
      clusterRetryStrategy: () => 500,
      retryDelayOnClusterDown: 100,
      retryDelayOnFailover: 100,
      slotsRefreshTimeout: 1_000,
      // Topology changes that no failed call reveals (a resharding, a failover of an idle slot).
      slotsRefreshInterval: 5_000,
    });
    return new FailoverLimiter(new RedisLimiter(client), { ownsClient: true, outage: 'refuse', ...options });
  }

  constructor(redis: RedisLimiter, options: FailoverLimiterOptions = {}) {
    this.redis = redis;
    this.client = redis.client;
    this.memory = options.memory ?? new MemoryLimiter();
    this.ownsClient = options.ownsClient ?? false;
    this.log = options.log ?? writeJsonLine;
    this.outage = options.outage ?? 'memory';
    this.options = {
      callTimeoutMs: options.callTimeoutMs ?? DEFAULTS.callTimeoutMs,
      connectGraceMs: options.connectGraceMs ?? DEFAULTS.connectGraceMs,
      probeIntervalMs: options.probeIntervalMs ?? DEFAULTS.probeIntervalMs,
      maxTrackedLeases: options.maxTrackedLeases ?? DEFAULTS.maxTrackedLeases,
      maxPendingSettlements: options.maxPendingSettlements ?? DEFAULTS.maxPendingSettlements,
      creditConnectGraceMs: options.creditConnectGraceMs ?? DEFAULTS.creditConnectGraceMs,
    };
    this.client.on('ready', this.onReady);
    this.client.on('error', this.onError);
  }

  /** True while calls are answered by the in-process limiter. */
  get usingFallback(): boolean {
    return this.fallback;
  }

  get backend(): 'redis' | 'memory' {
    return this.fallback ? 'memory' : 'redis';
  }

  /** Calls answered by the in-process limiter because Redis was unavailable. */
  get fallbackCount(): number {
    return this.fallbackCalls;
  }

  /** Number of distinct Redis outages seen. */
  get outageCount(): number {
    return this.outages;
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    return this.run(
      'admit',
      () => this.redis.admit(input),
      async () => {
        if (this.outage === 'refuse') return outageRefusal(input, this.options.probeIntervalMs);
        const result = await this.memory.admit(input);
        if (result.ok) this.trackMemoryLease(input.leaseId);
        return result;
      },
    );
  }

  release(input: ReleaseInput): Promise<void> {
    if (this.memoryLeases.delete(input.leaseId)) return this.memory.release(input);
    // The reservation of a Redis lease lives in Redis: settling it into an in-process
    // balance would credit money that was never taken there, so only usage goes to memory, and the
    // settlement is kept to be sent to Redis when it is back (until then the reservation stays
    // taken there; if this process ends first, it expires and returns to the balance).
    return this.run(
      'release',
      () => this.redis.release(input),
      () => {
        if (input.settle?.reserved !== undefined || input.budgets?.length) this.keepSettlement(input);
        return this.memory.release({ ...input, settle: undefined, budgets: undefined });
      },
    );
  }

  async renew(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void> {
    if (this.memoryLeases.has(leaseId)) return this.memory.renew(concurrencyKeys, leaseId, leaseTtlMs, reservation);
    await this.run(
      'renew',
      () => this.redis.renew(concurrencyKeys, leaseId, leaseTtlMs, reservation),
      () => this.memory.renew(concurrencyKeys, leaseId, leaseTtlMs, reservation),
    );
  }

  /**
   * Credits go to the shared balance in Redis only: an in-process balance is this instance's alone,
   * so a credit applied there would never reach the others (nor, from a CLI, any server). While
   * Redis is unreachable the credit is applied to the in-process fallback balance too (this
   * instance admits against it meanwhile) and false is returned: the caller keeps the credit pending
   * and applies it to Redis once it is reachable. A client still connecting gets a few seconds.
   */
  async applyCredit(entryId: string, key: string, delta: bigint): Promise<boolean> {
    if (!this.fallback && !this.closed && (await this.redisReady(this.options.creditConnectGraceMs))) {
      try {
        return await this.redis.applyCredit(entryId, key, delta);
      } catch (err) {
        this.onRedisFailure('applyCredit', err);
      }
    }
    await this.memory.applyCredit(entryId, key, delta);
    return false;
  }

  async initBalance(key: string, amount: bigint, credits?: string[], included?: string[], ttlMs?: number): Promise<void> {
    await this.run(
      'initBalance',
      () => this.redis.initBalance(key, amount, credits, included, ttlMs),
      () => this.memory.initBalance(key, amount, credits, included),
    );
  }

  async adjustBalance(key: string, delta: bigint): Promise<void> {
    await this.run(
      'adjustBalance',
      () => this.redis.adjustBalance(key, delta),
      () => this.memory.adjustBalance(key, delta),
    );
  }

  denied(keys: string[]): Promise<number> {
    return this.run(
      'denied',
      () => this.redis.denied(keys),
      () => this.memory.denied(),
    );
  }

  /** From where admissions go now: Redis, or the in-process limits while on the fallback. */
  usage(rules: readonly UsageRule[]): Promise<number[]> {
    return this.run(
      'usage',
      () => this.redis.usage(rules),
      () => this.memory.usage(rules),
    );
  }

  async forgetBalance(key: string): Promise<void> {
    await this.memory.forgetBalance(key);
    await this.run(
      'forgetBalance',
      () => this.redis.forgetBalance(key),
      async () => {},
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopProbe();
    this.client.off('ready', this.onReady);
    if (this.ownsClient) await closeClient(this.client);
    // Keep swallowing errors emitted while the socket winds down.
    if (!this.ownsClient) this.client.off('error', this.onError);
    await this.memory.close();
  }

  // ---- routing ------------------------------------------------------------------------

  /** Runs a call on Redis unless it is down; on any failure answers from memory instead. */
  private run<T>(op: string, viaRedis: () => Promise<T>, viaMemory: () => Promise<T>): Promise<T> {
    // The hot path: Redis connected and healthy, no extra promise layers.
    if (!this.fallback && this.client.status === 'ready') {
      return viaRedis().catch((err: unknown) => {
        this.onRedisFailure(op, err);
        this.fallbackCalls++;
        return viaMemory();
      });
    }
    return this.runSlow(op, viaRedis, viaMemory);
  }

  private async runSlow<T>(op: string, viaRedis: () => Promise<T>, viaMemory: () => Promise<T>): Promise<T> {
    if (!this.fallback) {
      if (await this.redisReady()) {
        // Bounded by the client's commandTimeout (one timer per command, no second one here).
        try {
          return await viaRedis();
        } catch (err) {
          this.onRedisFailure(op, err);
        }
      } else {
        this.enterFallback(op, new Error(`redis not connected (status ${this.client.status})`));
      }
    }
    this.fallbackCalls++;
    return viaMemory();
  }

  /** Ready now, or becomes ready within the connect grace (startup, quick reconnects). */
  private async redisReady(graceMs = this.options.connectGraceMs): Promise<boolean> {
    const status = this.client.status;
    if (status === 'ready') return true;
    if (status === 'end' || status === 'close' || this.closed) return false;
    this.readyWaiter ??= new Promise<void>((resolve) => {
      this.client.once('ready', () => {
        this.readyWaiter = undefined;
        resolve();
      });
    });
    await withTimeout(this.readyWaiter, graceMs).catch(() => {});
    return this.client.status === 'ready';
  }

  private onRedisFailure(op: string, err: unknown): void {
    // A reply error comes from a healthy server (e.g. a bad key type): answer this call
    // from memory but stay on Redis, since switching would not help the next call.
    if (err instanceof Error && err.name === 'ReplyError') {
      this.log({ level: 'error', msg: 'limiter redis command failed', op, error: err.message });
      return;
    }
    this.enterFallback(op, err);
  }

  private enterFallback(op: string, err: unknown): void {
    if (this.fallback || this.closed) return;
    this.fallback = true;
    this.outages++;
    this.outageStartedAt = Date.now();
    // Balances left from an earlier outage are stale: reload them from the database.
    this.memory.clearBalances();
    this.log({
      level: 'warn',
      msg: 'limiter falling back to in-process',
      op,
      error: err instanceof Error ? err.message : String(err),
      redisStatus: this.client.status,
    });
    this.startProbe();
  }

  private recover(trigger: 'ready' | 'probe'): void {
    if (!this.fallback || this.closed) return;
    this.fallback = false;
    this.stopProbe();
    this.log({
      level: 'info',
      msg: 'limiter back on redis',
      trigger,
      outageMs: Date.now() - this.outageStartedAt,
      fallbackCount: this.fallbackCalls,
    });
    this.resyncBalances();
    this.sendPendingSettlements();
  }

  private keepSettlement(input: ReleaseInput): void {
    // Only the settlement: the concurrency leases have been released in memory or expire in Redis.
    this.pendingSettlements.push({ leaseId: input.leaseId, concurrencyKeys: [], settle: input.settle, budgets: input.budgets, chargeId: input.chargeId });
    if (this.pendingSettlements.length > this.options.maxPendingSettlements) this.pendingSettlements.shift();
  }

  /** Sends the settlements kept while Redis was unreachable; any that fail again are kept again. */
  private sendPendingSettlements(): void {
    const pending = this.pendingSettlements;
    this.pendingSettlements = [];
    for (const input of pending) {
      withTimeout(this.redis.release(input), this.options.callTimeoutMs).catch(() => this.keepSettlement(input));
    }
  }

  /** Settlements waiting for Redis (tests, metrics). */
  get pendingSettlementCount(): number {
    return this.pendingSettlements.length;
  }

  /**
   * Balances reserved in memory during the outage were also charged in the database, so
   * the Redis copies are too high now: drop them so they are reloaded from the database.
   */
  private resyncBalances(): void {
    const keys = this.memory.balanceKeys();
    this.memory.clearBalances();
    for (const key of keys) {
      withTimeout(this.redis.forgetBalance(key), this.options.callTimeoutMs).catch(() => {});
    }
  }

  /**
   * 'ready' covers reconnects; the probe covers outages where the connection stayed up
   * but calls timed out (e.g. an overloaded server), which emit no 'ready'.
   */
  private startProbe(): void {
    this.stopProbe();
    this.probeTimer = setInterval(() => void this.probe(), this.options.probeIntervalMs);
    this.probeTimer.unref();
  }

  private stopProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  private async probe(): Promise<void> {
    if (this.client.status !== 'ready') return;
    try {
      // A cluster client routes a slot to the primary it last learned of; commands to a dead primary
      // fail without a redirection, so nothing else makes it ask again which node took the slot over.
      if (this.client instanceof Cluster) {
        const cluster = this.client;
        await withTimeout(
          new Promise<void>((resolve, reject) => cluster.refreshSlotsCache((err) => (err ? reject(err) : resolve()))),
          this.options.callTimeoutMs,
        );
      }
      await withTimeout(this.client.ping(), this.options.callTimeoutMs);
      this.recover('probe');
    } catch {
      // Still unhealthy; try again on the next tick.
    }
  }

  private trackMemoryLease(leaseId: string): void {
    this.memoryLeases.add(leaseId);
    // Bounded: a lease never released is forgotten first-in-first-out. Its memory slot
    // still expires by its TTL; only the routing of a very late release is lost.
    if (this.memoryLeases.size > this.options.maxTrackedLeases) {
      const oldest = this.memoryLeases.values().next().value;
      if (oldest !== undefined) this.memoryLeases.delete(oldest);
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LimiterTimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The refusal of an admission Redis could not answer (outage 'refuse'): a 429 with a short Retry-After. */
function outageRefusal(input: AdmitInput, retryAfterMs: number): AdmitResult {
  const rule: Rule = input.rules[0] ?? { kind: 'window', key: '', limit: 0, windowMs: retryAfterMs, label: 'limiter unavailable' };
  return {
    ok: false,
    reason: 'limit',
    rule: { ...rule, label: `${rule.label} (limiter briefly unavailable: Redis Cluster failing over)` },
    retryAfterMs: Math.max(1000, retryAfterMs),
    states: [],
  };
}

async function closeClient(client: RedisClient): Promise<void> {
  try {
    await withTimeout(client.quit(), 500);
  } catch {
    // Redis unreachable: drop the socket and stop the reconnect loop.
    client.disconnect();
  }
}

function writeJsonLine(entry: LimiterLogEntry): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}
