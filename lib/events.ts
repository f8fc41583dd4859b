import { Redis } from 'ioredis';
import { env } from '@/lib/env';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';

// Cache invalidation across instances: a revoked key or a changed account is announced on Redis
// pub/sub and every instance drops its cached copy at once. Without Redis there is one instance,
// and the local listeners are enough.
export type GatewayEvent = { type: 'key-revoked'; hash: string } | { type: 'account-changed'; userId: string };
type Listener = (event: GatewayEvent) => void;

const CHANNEL = 'gw:events';
const redisOptions = { maxRetriesPerRequest: 1, retryStrategy: () => 500 };

interface Bus {
  listeners: Set<Listener>;
  publisher?: Redis;
  subscriber?: Redis;
}

const getBus = (): Bus => singleton('events', () => ({ listeners: new Set<Listener>() }));

function dispatch(bus: Bus, event: GatewayEvent): void {
  for (const listener of bus.listeners) listener(event);
}

/** Subscribes (once per process) when the first listener registers: publishers-only processes never do. */
export function onGatewayEvent(listener: Listener): void {
  const bus = getBus();
  bus.listeners.add(listener);
  if (!env.REDIS_URL || bus.subscriber) return;
  const subscriber = new Redis(env.REDIS_URL, redisOptions);
  bus.subscriber = subscriber;
  subscriber.on('error', () => undefined);
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
  if (!env.REDIS_URL) return;
  if (!bus.publisher) {
    bus.publisher = new Redis(env.REDIS_URL, redisOptions);
    bus.publisher.on('error', () => undefined);
  }
  await bus.publisher.publish(CHANNEL, JSON.stringify(event)).catch((err) => log('warn', 'event publish failed', errorFields(err)));
}

export async function closeEvents(): Promise<void> {
  const bus = getBus();
  await bus.publisher?.quit().catch(() => undefined);
  bus.subscriber?.disconnect();
}
