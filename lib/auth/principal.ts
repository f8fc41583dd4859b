import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { GatewayError, codedError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { accountDenyKey, denyKeysFor, onGatewayEvent } from '@/lib/events';
import { extractApiKey, hashApiKey, isWellFormedKey, sameHash } from '@/lib/auth/keys';
import { getConfig, type TierName } from '@/lib/config';
import { countedClientIp, keyGuard, type KeyGuard } from '@/lib/keys/access';
import { inc } from '@/lib/metrics';
import { keyControlsOf } from '@/lib/keys/queries';
import { decimalToPico } from '@/lib/billing/money';
import { effectiveTier, principalPlanOf, type PrincipalPlan } from '@/lib/plans/windows';
import { sessionIsCurrent } from '@/lib/auth/session-epoch';
import { checkPlaygroundRequest, PLAYGROUND_KEY_ID, PLAYGROUND_PREFIX, readPlaygroundToken } from '@/lib/auth/playground';

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
  /** Seconds its replies are kept in the response cache when the request does not say (lib/cache/response-cache.ts); null: opt-in per request. */
  responseCacheTtl?: number | null;
  /** Region pins (lib/gateway/region.ts): the key's, else the account's; unset: served anywhere. */
  regionPin?: { key: string | null; account: string | null };
  /** The account's live plan (lib/plans), if it has one: it pays for the models it covers. */
  plan?: PrincipalPlan;
  /** The key's project and the organization member who made the key (logged with each request; docs/decisions/056). */
  projectId?: string | null;
  memberId?: string | null;
}

interface Entry {
  principal: Principal;
  expiresAt: number;
}

/** Invalid-key attempts of one client address in the current minute. */
interface Failures {
  count: number;
  resetAt: number;
}

interface KeyCache {
  byHash: Map<string, Entry>;
  /**
   * Hashes looked up and not found (or revoked), until when: floods of one bad key cost one lookup
   * per NEGATIVE_TTL_MS. Apart from the valid keys, so that a flood of distinct bad keys cannot push
   * them out. Insertion-ordered: the oldest goes first at the bound.
   */
  negative: Map<string, number>;
  /** Lookups in flight: concurrent requests with one key share one database read. */
  loading: Map<string, Promise<Principal | null>>;
  /** By client address (lib/client-ip.ts), oldest first at the bound. */
  failures: Map<string, Failures>;
  touched: Set<string>;
  timer?: NodeJS.Timeout;
}

const NEGATIVE_TTL_MS = 30_000;
const MAX_ENTRIES = 100_000;
const MAX_NEGATIVE = 50_000;
const MAX_FAILING_ADDRESSES = 50_000;
const FAILURE_WINDOW_MS = 60_000;

function cache(): KeyCache {
  return singleton('key-cache', () => {
    const c: KeyCache = { byHash: new Map(), negative: new Map(), loading: new Map(), failures: new Map(), touched: new Set() };
    onGatewayEvent((event) => {
      if (event.type === 'key-revoked' || event.type === 'key-changed') c.byHash.delete(event.hash);
      // A new key is random, so its hash was never looked up; dropping it costs nothing and keeps
      // "a key works the moment it is shown" true whatever made the hash known before.
      else if (event.type === 'key-created') c.negative.delete(event.hash);
      else if (event.type === 'plans-changed') return;
      else for (const [hash, entry] of c.byHash) if (entry.principal.userId === event.userId) c.byHash.delete(hash);
    });
    return c;
  });
}

/** The rows that may be the account's live plan (principalPlanOf picks the live one). */
const LIVE_SUBSCRIPTIONS = { where: { status: { in: ['active' as const, 'past_due' as const] } }, orderBy: { startedAt: 'desc' as const }, take: 3 };

async function load(hash: string): Promise<Principal | null> {
  const db = await getDb();
  const row = await db.apiKey.findUnique({ where: { hash }, include: { user: { include: { subscriptions: LIVE_SUBSCRIPTIONS } }, project: true } });
  const found = row !== null && !row.revokedAt && sameHash(row.hash, hash);
  inc('gateway_key_lookups_total', { result: found ? 'found' : 'invalid' });
  if (!found) return null;
  const plan = principalPlanOf(row.user.subscriptions.find((s) => principalPlanOf(s)));
  // An organization's key counts against the monthly budget of the member who made it (docs/decisions/056).
  const member =
    row.createdById && row.createdById !== row.userId
      ? await db.membership.findUnique({
          where: { orgId_userId: { orgId: row.userId, userId: row.createdById } },
          include: { user: { select: { email: true } } },
        })
      : null;
  const p = row.project?.userId === row.userId ? row.project : null;
  return {
    keyId: row.id,
    keyHash: row.hash,
    userId: row.userId,
    tier: effectiveTier(row.user.tier, plan, getConfig()),
    suspended: row.user.status === 'suspended',
    limits: (row.user.limits as Principal['limits']) ?? null,
    denyKeys: denyKeysFor(row.userId, row.hash, row.controlsVersion),
    guard: keyGuard(row.name, keyControlsOf(row), row.controlsVersion, {
      project: p
        ? {
            id: p.id,
            name: p.name,
            models: p.models.length > 0 ? new Set(p.models) : null,
            monthlyBudgetPico: p.monthlyBudgetUsd === null ? null : decimalToPico(p.monthlyBudgetUsd),
            budgetVersion: p.budgetVersion,
          }
        : undefined,
      member: member
        ? {
            id: member.userId,
            name: member.user.email,
            monthlyBudgetPico: member.monthlyBudgetUsd === null ? null : decimalToPico(member.monthlyBudgetUsd),
            budgetVersion: member.budgetVersion,
          }
        : undefined,
    }),
    projectId: p?.id ?? null,
    memberId: row.createdById ?? null,
    responseCacheTtl: row.responseCacheTtl,
    regionPin: row.region || row.user.region ? { key: row.region, account: row.user.region } : undefined,
    plan,
  };
}

/** One database read per key at a time, however many requests wait for it. */
function lookup(c: KeyCache, hash: string): Promise<Principal | null> {
  let pending = c.loading.get(hash);
  if (!pending) {
    pending = load(hash).finally(() => c.loading.delete(hash));
    c.loading.set(hash, pending);
  }
  return pending;
}

function rememberInvalid(c: KeyCache, hash: string, now: number): void {
  c.negative.delete(hash);
  if (c.negative.size >= MAX_NEGATIVE) c.negative.delete(c.negative.keys().next().value!);
  c.negative.set(hash, now + NEGATIVE_TTL_MS);
}

/** The 429 of an address past its invalid-key budget, if it is. */
function throttled(c: KeyCache, ip: string, now: number): GatewayError | null {
  const f = c.failures.get(ip);
  if (!f || f.resetAt <= now || f.count < getConfig().limits.invalid_keys_per_ip_per_minute) return null;
  inc('gateway_invalid_key_throttled_total');
  return codedError('rate_limit_exceeded', 'key.invalid_throttled', undefined, {
    retryAfterMs: f.resetAt - now,
  });
}

/** Counts an invalid key against its address; the 401, or the 429 once past the budget. */
function invalidKey(c: KeyCache, ip: string, now: number): GatewayError {
  let f = c.failures.get(ip);
  if (!f || f.resetAt <= now) {
    c.failures.delete(ip);
    if (c.failures.size >= MAX_FAILING_ADDRESSES) c.failures.delete(c.failures.keys().next().value!);
    f = { count: 0, resetAt: now + FAILURE_WINDOW_MS };
    c.failures.set(ip, f);
  }
  f.count++;
  return (f.count > getConfig().limits.invalid_keys_per_ip_per_minute && throttled(c, ip, now)) || codedError('invalid_api_key', 'key.invalid');
}

/**
 * Resolves the caller. Cached for AUTH_CACHE_TTL_S; revocation and account changes are pushed to
 * every instance through Redis pub/sub, so the TTL only bounds staleness if that message is lost.
 * When the database is down, an expired entry keeps serving (stale-while-error).
 *
 * Invalid keys are remembered for NEGATIVE_TTL_MS, and an address (`req`'s, lib/keys/access.ts)
 * that sent more than `limits.invalid_keys_per_ip_per_minute` of them gets 429 until its minute is
 * over for every key this instance would have to look up; keys it holds in its cache (in use here)
 * keep working from there (docs/decisions/018-invalid-key-throttle.md).
 */
export async function authenticate(req: { headers: Record<string, string | undefined>; ip: string }): Promise<Principal> {
  const key = extractApiKey(req.headers as { authorization?: string; 'x-api-key'?: string });
  if (!key) throw codedError('invalid_api_key', 'key.missing');
  if (key.startsWith(PLAYGROUND_PREFIX)) return playgroundPrincipal(key, req);
  if (!isWellFormedKey(key)) throw codedError('invalid_api_key', 'key.malformed');
  const hash = hashApiKey(key);
  const c = cache();
  const now = Date.now();
  let entry = c.byHash.get(hash);
  if (!entry || entry.expiresAt <= now) {
    const ip = countedClientIp(req);
    const knownInvalid = (c.negative.get(hash) ?? 0) > now;
    if (knownInvalid) throw invalidKey(c, ip, now);
    // A key this instance has not seen valid: past the address's budget, not even looked up.
    if (!entry) {
      const refused = throttled(c, ip, now);
      if (refused) throw refused;
    }
    let principal: Principal | null;
    try {
      principal = await lookup(c, hash);
    } catch (err) {
      // Database unreachable: a cached principal keeps serving; an unknown key cannot be checked.
      if (!entry) {
        log('warn', 'api key lookup failed', errorFields(err));
        throw codedError('unavailable', 'key.cannot_verify', undefined, { retryAfterMs: 2000 });
      }
      principal = entry.principal;
    }
    if (!principal) {
      c.byHash.delete(hash);
      rememberInvalid(c, hash, now);
      throw invalidKey(c, ip, now);
    }
    if (principal !== entry?.principal) {
      entry = { principal, expiresAt: now + env.AUTH_CACHE_TTL_S * 1000 };
      if (c.byHash.size >= MAX_ENTRIES) c.byHash.clear();
      c.byHash.set(hash, entry);
    }
  }
  const principal = entry.principal;
  if (principal.suspended) throw codedError('account_suspended', 'auth.account_suspended');
  markUsed(principal.keyId);
  return principal;
}

/**
 * The caller of a dashboard playground request (lib/auth/playground.ts): the session's account, with
 * the account's tier, limits and balance and no key controls, logged under PLAYGROUND_KEY_ID. A
 * forged credential counts against the address like an invalid key; the account is read once per
 * credential (cached like a key's principal, never past the credential's expiry).
 */
async function playgroundPrincipal(token: string, req: { headers: Record<string, string | undefined>; ip: string }): Promise<Principal> {
  const c = cache();
  const now = Date.now();
  const claims = readPlaygroundToken(token);
  if (!claims) {
    const ip = countedClientIp(req);
    throw throttled(c, ip, now) ?? invalidKey(c, ip, now);
  }
  await checkPlaygroundRequest(claims, req.headers, now);
  const cacheKey = `pg:${hashApiKey(token)}`;
  let entry = c.byHash.get(cacheKey);
  if (!entry || entry.expiresAt <= now) {
    let user;
    try {
      user = await (await getDb()).user.findUnique({ where: { id: claims.u }, include: { subscriptions: LIVE_SUBSCRIPTIONS } });
    } catch (err) {
      log('warn', 'playground account lookup failed', errorFields(err));
      throw codedError('unavailable', 'session.cannot_verify', undefined, { retryAfterMs: 2000 });
    }
    if (!user || !sessionIsCurrent(claims.t, user.sessionsValidFrom)) throw codedError('invalid_api_key', 'session.ended');
    const plan = principalPlanOf(user.subscriptions.find((s) => principalPlanOf(s)));
    const principal: Principal = {
      keyId: PLAYGROUND_KEY_ID,
      keyHash: cacheKey,
      userId: user.id,
      tier: effectiveTier(user.tier, plan, getConfig()),
      plan,
      suspended: user.status === 'suspended',
      limits: (user.limits as Principal['limits']) ?? null,
      // Only the account's marker: there is no key to revoke or edit.
      denyKeys: [accountDenyKey(user.id)],
      guard: null,
      regionPin: user.region ? { key: null, account: user.region } : undefined,
    };
    entry = { principal, expiresAt: Math.min(claims.e, now + env.AUTH_CACHE_TTL_S * 1000) };
    if (c.byHash.size >= MAX_ENTRIES) c.byHash.clear();
    c.byHash.set(cacheKey, entry);
  }
  if (entry.principal.suspended) throw codedError('account_suspended', 'auth.account_suspended');
  return entry.principal;
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
    throw codedError('unavailable', 'key.cannot_verify', undefined, { retryAfterMs: 2000 });
  }
  if (principal) c.byHash.set(hash, { principal, expiresAt: Date.now() + env.AUTH_CACHE_TTL_S * 1000 });
  else rememberInvalid(c, hash, Date.now());
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
