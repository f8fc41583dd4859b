import { newRedisClient, redisConfigured, type RedisClient } from '@/lib/redis-client';
import { log, errorFields } from '@/lib/log';
import { accountKey } from '@/lib/limits/keys';
import { singleton } from '@/lib/singleton';

// Cache invalidation across instances: a revoked key or a changed account is announced on Redis
// pub/sub and every instance drops its cached copy at once. Without Redis there is one instance,
// and the local listeners are enough.
//
// A message can reach an instance after that instance's next request (it was reconnecting, or it was
// busy), so the two changes that must hold on the very next request also leave a deny marker in
// Redis, written before the message is sent: the admission script (one round trip every request
// makes anyway) refuses while it exists. A marker only has to outlive every cached copy made before
// the change (AUTH_CACHE_TTL_S is at most an hour): after that, caches reload from the database,
// which says the same. So markers expire after DENY_MARKER_MS, and one left behind by a failed
// reactivation (Redis unreachable at that moment) cannot block an account for longer than that.
export type GatewayEvent =
  | { type: 'key-revoked'; hash: string }
  /** A key's controls were edited: copies cached at `staleVersion` are refused and reloaded. */
  | { type: 'key-changed'; hash: string; staleVersion: number }
  /** A key was made: no instance may still remember its hash as invalid. */
  | { type: 'key-created'; hash: string }
  /** `suspended` is set when the account's status changed. */
  | { type: 'account-changed'; userId: string; suspended?: boolean }
  /** A plan was edited in the console: every instance reads the plans again (lib/plans/catalogue.ts). */
  | { type: 'plans-changed' };
type Listener = (event: GatewayEvent) => void;

const CHANNEL = 'gw:events';
const DENY_MARKER_MS = 2 * 3_600_000;

/** The deny marker of a suspended account. */
// In the account's hash tag (lib/limits/keys.ts): on Redis Cluster the account's admission reads it in the same call.
export const accountDenyKey = (userId: string) => accountKey(userId, 'deny');
/** The deny marker of a revoked key (by its hash). */
// A key's markers share the key's own tag: one more call on a cluster, for both.
export const keyDenyKey = (keyHash: string) => `gw:{k:${keyHash}}:deny`;

/**
 * The marker saying a key's controls changed after `version` (lib/keys): a copy cached at that
 * version meets it in the admission and is reloaded, so an edit holds on the next request everywhere.
 */
export const keyStaleKey = (keyHash: string, version: number) => `gw:{k:${keyHash}}:stale:${version}`;

/** Deny markers checked by every admission (see AdmitInput.denyKeys): [account, key, key edited]. */
export function denyKeysFor(userId: string, keyHash: string, version = 0): string[] {
  return [accountDenyKey(userId), keyDenyKey(keyHash), keyStaleKey(keyHash, version)];
}
const redisOptions = { maxRetriesPerRequest: 1, retryStrategy: () => 500 };

interface Bus {
  listeners: Set<Listener>;
  publisher?: RedisClient;
  subscriber?: RedisClient;
}

const getBus = (): Bus => singleton('events', () => ({ listeners: new Set<Listener>() }));

function dispatch(bus: Bus, event: GatewayEvent): void {
  for (const listener of bus.listeners) listener(event);
}

/** Subscribes (once per process) when the first listener registers: publishers-only processes never do. */
export function onGatewayEvent(listener: Listener): void {
  const bus = getBus();
  bus.listeners.add(listener);
  if (!redisConfigured() || bus.subscriber) return;
  // On a cluster, PUBLISH reaches the subscribers of every node: one subscription is enough.
  const subscriber = newRedisClient('events-subscriber', redisOptions)!;
  bus.subscriber = subscriber;
  // Re-subscribes by itself after a reconnect (ioredis autoResubscribe).
  subscriber.subscribe(CHANNEL).catch((err) => log('warn', 'event subscription failed', errorFields(err)));
  subscriber.on('message', (_channel: string, text: string) => {
    try {
      dispatch(bus, JSON.parse(text) as GatewayEvent);
    } catch {
      /* a foreign message on our channel: ignore */
    }
  });
}

export async function publishGatewayEvent(event: GatewayEvent): Promise<void> {
  const bus = getBus();
  dispatch(bus, event);
  if (!redisConfigured()) return;
  if (!bus.publisher) {
    bus.publisher = newRedisClient('events-publisher', redisOptions)!;
  }
  const redis = bus.publisher;
  try {
    if (event.type === 'key-revoked') await redis.set(keyDenyKey(event.hash), '1', 'PX', DENY_MARKER_MS);
    else if (event.type === 'key-changed') await redis.set(keyStaleKey(event.hash, event.staleVersion), '1', 'PX', DENY_MARKER_MS);
    else if (event.type === 'account-changed' && event.suspended === true) await redis.set(accountDenyKey(event.userId), '1', 'PX', DENY_MARKER_MS);
    else if (event.type === 'account-changed' && event.suspended === false) await redis.del(accountDenyKey(event.userId));
    await redis.publish(CHANNEL, JSON.stringify(event));
  } catch (err) {
    log('warn', 'event publish failed', errorFields(err));
  }
}

export async function closeEvents(): Promise<void> {
  const bus = getBus();
  await bus.publisher?.quit().catch(() => undefined);
  bus.subscriber?.disconnect();
}
