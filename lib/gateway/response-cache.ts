import { createHash } from 'node:crypto';
import type { ChannelInfo, GatewayConfig, ModelInfo } from '@/lib/config';
import type { Principal } from '@/lib/auth/principal';
import { GatewayError } from '@/lib/errors';
import { inc } from '@/lib/metrics';
import { cacheStore } from '@/lib/cache/kv';
import type { GatewayRequest } from '@/lib/gateway/types';

// The response cache (docs/decisions/036-reconciliation-and-caches.md): an exact-match cache of
// upstream replies, opt-in per request (`x-service-cache: ttl=<seconds>`) or per key (its
// `responseCacheTtl`), keyed by the account, the route, the planned model, stream or not, and the
// request body normalized (keys sorted; fields that do not change the reply left out). What is
// stored is the upstream's own reply (JSON or SSE text) and the channel it came from: a hit is
// replayed through the same translator the miss used, so it is rendered in the client's protocol
// (a stream as a stream), with this request's ids and cost. `Cache-Control: no-store` bypasses it.

export const CACHE_HEADER = 'x-service-cache';

/** Body fields that do not change what the upstream answers (identifiers, transport, storage). */
const IGNORED_FIELDS = new Set(['stream', 'stream_options', 'user', 'metadata', 'prompt_cache_key', 'safety_identifier', 'store']);

export interface CacheAsk {
  ttlMs: number;
}

/** A stored reply: the upstream's text as it arrived, and where it came from. */
export interface CachedReply {
  v: 1;
  protocol: ChannelInfo['protocol'];
  channel: string;
  model: string;
  stream: boolean;
  /** The upstream reply: a JSON body, or the SSE text of a stream. */
  body: string;
  /** When it was stored (unix ms) and by which request. */
  at: number;
  requestId: string;
}

/**
 * What the request asks of the cache: null when it does not use it (no header and no key TTL,
 * `Cache-Control: no-store`, `x-service-cache: off`, or the cache switched off by the operator).
 * A malformed header is the client's 400, naming it.
 */
export function cacheAsk(req: GatewayRequest, cfg: GatewayConfig, principal: Principal): CacheAsk | null {
  const rc = cfg.responseCache;
  if (!rc.enabled) return null;
  const control = req.headers['cache-control'];
  if (control && /(^|,)\s*no-store\s*(,|$)/i.test(control)) return null;
  const header = req.headers[CACHE_HEADER];
  let ttlSeconds: number | null = principal.responseCacheTtl ?? null;
  if (header !== undefined) {
    const value = header.trim().toLowerCase();
    if (value === 'off' || value === 'no-store') return null;
    const m = /^ttl\s*=\s*(\d{1,9})$/.exec(value);
    if (!m || Number(m[1]) < 1) {
      throw new GatewayError('invalid_request', `Header ${CACHE_HEADER} must be "ttl=<seconds>" (a whole number of seconds, at least 1) or "off".`, {
        param: CACHE_HEADER,
      });
    }
    ttlSeconds = Number(m[1]);
  }
  if (ttlSeconds === null) return null;
  return { ttlMs: Math.min(ttlSeconds, rc.maxTtlSeconds) * 1000 };
}

/** JSON with object keys sorted at every depth, top-level fields in IGNORED_FIELDS left out. */
function canonical(value: unknown, top = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v)).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>)
      .filter((k) => !(top && IGNORED_FIELDS.has(k)) && (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The store key of a request: never shared across accounts (the account is hashed in). */
export function cacheKey(userId: string, endpoint: string, model: ModelInfo, stream: boolean, body: Record<string, unknown>): string {
  const h = createHash('sha256');
  h.update(`v1\0${userId}\0${endpoint}\0${model.name}\0${stream ? 's' : 'j'}\0`);
  h.update(canonical(body, true));
  return `rc:${h.digest('base64url')}`;
}

function store(cfg: GatewayConfig) {
  return cacheStore('response-cache', () => cfg.responseCache.memoryMaxBytes);
}

/** The stored reply for `key`, if any (a foreign or damaged value is a miss). */
export async function lookup(cfg: GatewayConfig, key: string): Promise<CachedReply | null> {
  const text = await store(cfg).get(key);
  if (!text) {
    inc('gateway_response_cache_total', { result: 'miss' });
    return null;
  }
  try {
    const entry = JSON.parse(text) as CachedReply;
    if (entry.v !== 1 || typeof entry.body !== 'string') return null;
    inc('gateway_response_cache_total', { result: 'hit' });
    return entry;
  } catch {
    return null;
  }
}

/** Stores a reply (not awaited by the request; a reply over the size cap is not stored). */
export function remember(cfg: GatewayConfig, key: string, ttlMs: number, entry: CachedReply): void {
  if (Buffer.byteLength(entry.body) > cfg.responseCache.maxEntryBytes) {
    inc('gateway_response_cache_total', { result: 'too_large' });
    return;
  }
  void store(cfg).set(key, JSON.stringify(entry), ttlMs);
}

/**
 * Collects a reply's upstream bytes up to the size cap; `text()` is null once it went over
 * (such a reply is relayed as usual, not stored).
 */
export class ReplyRecorder {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private over = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer | string): void {
    if (this.over) return;
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += b.length;
    if (this.bytes > this.maxBytes) {
      this.over = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(b);
  }

  text(): string | null {
    return this.over ? null : Buffer.concat(this.chunks).toString('utf8');
  }
}

/** A cost billed at the operator's fraction for a hit (exact: billionths). */
export function hitCost(cost: bigint, billedNano: bigint): bigint {
  return (cost * billedNano) / 1_000_000_000n;
}
