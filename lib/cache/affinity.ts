import { createHash } from 'node:crypto';
import type { ChannelInfo, GatewayConfig } from '@/lib/config';
import { channelAvailable } from '@/lib/channels/breaker';
import { healthOf } from '@/lib/channels/health';
import { cacheStore } from '@/lib/cache/kv';
import { inc } from '@/lib/metrics';

// Cache-aware routing (docs/decisions/036-reconciliation-and-caches.md): a conversation stays on
// the channel that last served it while that channel is healthy, so the upstream's prompt cache
// (warm on that channel's account) keeps being read instead of written again. The conversation is
// named by the client (`x-session-affinity`, a `prompt_cache_key`, Anthropic's `metadata.user_id`)
// or, failing those, by a hash of its leading messages (the system prompt and the first message:
// what every turn of one conversation starts with). The pin is kept in Redis (shared by every
// instance) or in memory without it, for `cache_affinity.ttl_seconds` after the last request.

export const AFFINITY_HEADER = 'x-session-affinity';
const MAX_NAME = 512;
/** The in-process store's bound (pins are small: a key and a channel name). */
const MEMORY_BYTES = 16 * 1024 * 1024;

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v.slice(0, MAX_NAME) : undefined;
}

/** What names the conversation of this request, if anything does. */
export function conversationOf(headers: Record<string, string | undefined>, body: Record<string, unknown>): string | undefined {
  const header = str(headers[AFFINITY_HEADER]);
  if (header) return `h:${header}`;
  const key = str(body.prompt_cache_key);
  if (key) return `p:${key}`;
  const metadata = body.metadata;
  const user = metadata && typeof metadata === 'object' ? str((metadata as Record<string, unknown>).user_id) : undefined;
  if (user) return `u:${user}`;
  const turns = [body.messages, body.contents, body.input].find((v) => Array.isArray(v) && v.length > 0) as unknown[] | undefined;
  if (!turns) return undefined;
  const system = body.system ?? body.instructions ?? body.systemInstruction ?? body.system_instruction ?? null;
  return `m:${createHash('sha256')
    .update(JSON.stringify([system, turns[0]]))
    .digest('base64url')}`;
}

/** The store key of a conversation's pin on `model`: per account. */
export function affinityKey(userId: string, model: string, conversation: string): string {
  return `aff:${createHash('sha256').update(`${userId}\0${model}\0${conversation}`).digest('base64url')}`;
}

const store = () => cacheStore('affinity', () => MEMORY_BYTES);

/** The channel the conversation is pinned to, if any. */
export function pinnedChannel(key: string): Promise<string | null> {
  return store().get(key);
}

/** Pins (or keeps pinned) the conversation to `channel` for the configured TTL (never rejects). */
export function pin(cfg: GatewayConfig, key: string, channel: string): Promise<void> {
  return store().set(key, channel, cfg.cacheAffinity.ttlSeconds * 1000);
}

/**
 * `ordered` with the pinned channel first when it is among them at the first one's priority,
 * healthy (lib/channels/health.ts) and its breaker closed; else unchanged (the conversation moves,
 * and is pinned where it lands).
 */
export function preferPinned(ordered: ChannelInfo[], pinned: string | null): { channels: ChannelInfo[]; kept: boolean } {
  if (!pinned || ordered[0]?.name === pinned) return { channels: ordered, kept: pinned !== null && ordered[0]?.name === pinned };
  const i = ordered.findIndex((c) => c.name === pinned);
  // The operator's priorities still rule: the pin chooses among the channels of the first one's
  // priority (a conversation that fell back to a lower one returns when the higher one can serve).
  if (i < 0 || ordered[i].priority !== ordered[0].priority || healthOf(pinned) !== 'healthy' || !channelAvailable(pinned, Date.now())) {
    inc('gateway_cache_affinity_total', { result: 'moved' });
    return { channels: ordered, kept: false };
  }
  inc('gateway_cache_affinity_total', { result: 'kept' });
  return { channels: [ordered[i], ...ordered.slice(0, i), ...ordered.slice(i + 1)], kept: true };
}
