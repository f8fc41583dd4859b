import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { GatewayError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { denyKeysFor, onGatewayEvent } from '@/lib/events';
import { extractApiKey, hashApiKey, isWellFormedKey, sameHash } from '@/lib/auth/keys';
import type { TierName } from '@/lib/config';
import { keyGuard, type KeyGuard } from '@/lib/keys/access';
import { keyControlsOf } from '@/lib/keys/queries';

/** Who is calling: resolved from an API key, cached so an admitted request needs no database trip. */
export interface Principal {
  keyId: string;
  keyHash: string;
  userId: string;
  tier: TierName;
  suspended: boolean;
  limits: { rpm?: number; rph?: number; tokensPerDay?: number | null; concurrency?: number } | null;
  /** Markers that refuse this caller in the admission itself: [account suspended, key revoked, key edited]. */
  denyKeys: string[];
  /** The key's own controls (lib/keys); null when it has none. */
  guard: KeyGuard | null;
}

interface Entry {
  principal: Principal | null; // null caches "unknown or revoked" briefly, so floods of bad keys stay cheap
  expiresAt: number;
}

interface KeyCache {
  byHash: Map<string, Entry>;
  touched: Set<string>;
  timer?: NodeJS.Timeout;
}

const NEGATIVE_TTL_MS = 2_000;
const MAX_ENTRIES = 100_000;

function cache(): KeyCache {
  return singleton('key-cache', () => {
    const c: KeyCache = { byHash: new Map(), touched: new Set() };
    onGatewayEvent((event) => {
      if (event.type === 'key-revoked' || event.type === 'key-changed') c.byHash.delete(event.hash);
      else for (const [hash, entry] of c.byHash) if (entry.principal?.userId === event.userId) c.byHash.delete(hash);
    });
    return c;
  });
}

async function load(hash: string): Promise<Principal | null> {
  const db = await getDb();
  const row = await db.apiKey.findUnique({ where: { hash }, include: { user: true } });
  if (!row || row.revokedAt || !sameHash(row.hash, hash)) return null;
  return {
    keyId: row.id,
    keyHash: row.hash,
    userId: row.userId,
    tier: row.user.tier,
    suspended: row.user.status === 'suspended',
    limits: (row.user.limits as Principal['limits']) ?? null,
    denyKeys: denyKeysFor(row.userId, row.hash, row.controlsVersion),
    guard: keyGuard(row.name, keyControlsOf(row), row.controlsVersion),
  };
}

/**
 * Resolves the caller. Cached for AUTH_CACHE_TTL_S; revocation and account changes are pushed to
 * every instance through Redis pub/sub, so the TTL only bounds staleness if that message is lost.
 * When the database is down, an expired entry keeps serving (stale-while-error).
 */
export async function authenticate(headers: Record<string, string | undefined>): Promise<Principal> {
  const key = extractApiKey(headers as { authorization?: string; 'x-api-key'?: string });
  if (!key) throw new GatewayError('invalid_api_key', 'Missing API key. Send it as "Authorization: Bearer <key>".');
  if (!isWellFormedKey(key)) throw new GatewayError('invalid_api_key', 'Malformed API key.');
  const hash = hashApiKey(key);
  const c = cache();
  const now = Date.now();
  let entry = c.byHash.get(hash);
  if (!entry || entry.expiresAt <= now) {
    try {
      const principal = await load(hash);
      entry = { principal, expiresAt: now + (principal ? env.AUTH_CACHE_TTL_S * 1000 : NEGATIVE_TTL_MS) };
      if (c.byHash.size >= MAX_ENTRIES) c.byHash.clear();
      c.byHash.set(hash, entry);
    } catch (err) {
      // Database unreachable: a cached principal keeps serving; an unknown key cannot be checked.
      if (!entry?.principal) {
        log('warn', 'api key lookup failed', errorFields(err));
        throw new GatewayError('unavailable', 'The gateway cannot verify this key right now. Please retry shortly.', { retryAfterMs: 2000 });
      }
    }
  }
  const principal = entry.principal;
  if (!principal) throw new GatewayError('invalid_api_key', 'Invalid or revoked API key.');
  if (principal.suspended) throw new GatewayError('account_suspended', 'This account is suspended.');
  markUsed(principal.keyId);
  return principal;
}

/** Drops one cached principal: the admission found it suspended or revoked (a deny marker). */
export function forgetPrincipal(hash: string): void {
  cache().byHash.delete(hash);
}

/**
 * Reads a key again from the database (its cached copy met the marker of an edit in the admission)
 * and caches the new copy: one database read per instance per edit, not per request.
 */
export async function reloadPrincipal(hash: string): Promise<Principal | null> {
  const c = cache();
  c.byHash.delete(hash);
  let principal: Principal | null;
  try {
    principal = await load(hash);
  } catch {
    throw new GatewayError('unavailable', 'The gateway cannot verify this key right now. Please retry shortly.', { retryAfterMs: 2000 });
  }
  c.byHash.set(hash, { principal, expiresAt: Date.now() + (principal ? env.AUTH_CACHE_TTL_S * 1000 : NEGATIVE_TTL_MS) });
  return principal;
}

// last_used_at is written in batches off the hot path.
function markUsed(keyId: string): void {
  const c = cache();
  c.touched.add(keyId);
  if (!c.timer) {
    c.timer = setTimeout(() => void flushKeyUsage(), 5_000);
    c.timer.unref();
  }
}

export async function flushKeyUsage(): Promise<void> {
  const c = cache();
  c.timer = undefined;
  if (c.touched.size === 0) return;
  const ids = [...c.touched];
  c.touched.clear();
  try {
    const db = await getDb();
    await db.apiKey.updateMany({ where: { id: { in: ids } }, data: { lastUsedAt: new Date() } });
  } catch {
    for (const id of ids) c.touched.add(id); // retried with the next batch
  }
}
