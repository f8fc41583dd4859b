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

interface Bus {
  listeners: Set<Listener>;
  publisher?: Redis;
  subscriber?: Redis;
}

function getBus(): Bus {
  return singleton('events', () => {
    const bus: Bus = { listeners: new Set() };
    if (env.REDIS_URL) {
      const opts = { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 500 };
      bus.publisher = new Redis(env.REDIS_URL, opts);
      bus.subscriber = new Redis(env.REDIS_URL, { ...opts, enableOfflineQueue: true });
      for (const c of [bus.publisher, bus.subscriber]) c.on('error', () => undefined);
      bus.subscriber.subscribe(CHANNEL).catch((err) => log('warn', 'event subscription failed', errorFields(err)));
      bus.subscriber.on('message', (_channel: string, text: string) => {
        try {
          dispatch(bus, JSON.parse(text) as GatewayEvent);
        } catch {
          /* a foreign message on our channel: ignore */
        }
      });
    }
    return bus;
  });
}

function dispatch(bus: Bus, event: GatewayEvent): void {
  for (const listener of bus.listeners) listener(event);
}

export function onGatewayEvent(listener: Listener): void {
  getBus().listeners.add(listener);
}

export async function publishGatewayEvent(event: GatewayEvent): Promise<void> {
  const bus = getBus();
  dispatch(bus, event);
  if (bus.publisher) {
    await bus.publisher.publish(CHANNEL, JSON.stringify(event)).catch((err) => log('warn', 'event publish failed', errorFields(err)));
  }
}

export async function closeEvents(): Promise<void> {
  const bus = getBus();
  bus.publisher?.disconnect();
  bus.subscriber?.disconnect();
}
