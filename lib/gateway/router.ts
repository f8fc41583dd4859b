import { createHash } from 'node:crypto';
import type { ChannelInfo, GatewayConfig, ModelInfo, TierName } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { applyChannelOverrides } from '@/lib/channels/overrides';
import { channelAvailable, recordChannelResult } from '@/lib/channels/breaker';
import { anyUnhealthy, healthOf } from '@/lib/channels/health';
import { healthRank } from '@/lib/channels/health-machine';
import { checkAllowedModel } from '@/lib/keys/access';

export const AUTO_MODEL = 'service-auto';

// The circuit breaker lives beside the channels' runtime state (lib/channels/breaker.ts).
export { recordChannelResult };

/**
 * A repeatable stand-in for Math.random drawn from a key (SHA-256 in counter mode): the same key
 * makes the same weighted picks, so one conversation (a `prompt_cache_key`) keeps to one channel
 * and its upstream prompt cache, while different keys spread by the channels' weights.
 */
export function keyedRandom(key: string): () => number {
  let counter = 0;
  return () => createHash('sha256').update(`${key}\0${counter++}`).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * Channels in the order to try: by health (healthy, degraded, recovering; failed ones only when no
 * other channel is left, lib/channels/health.ts), then priority, then weighted random within a
 * priority; this instance's open breakers last. A recovering channel goes first for its
 * `recovering_share` of requests (it needs some live traffic to prove itself).
 */
export function orderChannels(channels: ChannelInfo[], now = Date.now(), random = Math.random): ChannelInfo[] {
  channels = applyChannelOverrides(channels); // the console's runtime disable, weight and limits (lib/channels/overrides.ts)
  // One channel (the common case): tried whatever its circuit says, as it would be when last.
  if (channels.length <= 1) return channels;
  const groups = new Map<number, ChannelInfo[]>();
  for (const c of channels) groups.set(c.priority, [...(groups.get(c.priority) ?? []), c]);
  const ordered: ChannelInfo[] = [];
  for (const priority of [...groups.keys()].sort((a, b) => b - a)) {
    const pool = [...groups.get(priority)!];
    while (pool.length) {
      const total = pool.reduce((s, c) => s + c.weight, 0);
      let pick = random() * total;
      let index = 0;
      while (index < pool.length - 1 && (pick -= pool[index].weight) >= 0) index++;
      ordered.push(pool.splice(index, 1)[0]);
    }
  }
  const byHealth = anyUnhealthy() ? orderByHealth(ordered) : ordered;
  const open = byHealth.filter((c) => !channelAvailable(c.name, now));
  return open.length === 0 ? byHealth : [...byHealth.filter((c) => channelAvailable(c.name, now)), ...open];
}

function orderByHealth(ordered: ChannelInfo[]): ChannelInfo[] {
  const ranks = ordered.map((c) => healthRank(healthOf(c.name)));
  if (ranks.every((r) => r === 0)) return ordered;
  const by = (rank: number) => ordered.filter((_, i) => ranks[i] === rank);
  const [healthy, degraded, recovering, failed] = [by(0), by(1), by(2), by(3)];
  // A share of the traffic proves a recovering channel (the share is its own threshold); Math.random,
  // not the request's keyed pick, so that no conversation is pinned to it.
  const share = recovering[0]?.health?.recoveringShare ?? 0.1;
  const live = recovering.length && Math.random() < share ? [...recovering, ...healthy, ...degraded] : [...healthy, ...degraded, ...recovering];
  // Failed channels only when nothing else serves the model (better a likely failure than a sure one).
  return live.length ? live : failed;
}

// ---- model resolution
export interface ModelPlan {
  /** First the chosen model, then its declared fallbacks. */
  models: ModelInfo[];
  reason: string | null;
}

export interface RequestNeeds {
  tools: boolean;
  json: boolean;
  promptTokens: number;
  maxOutputTokens: number | undefined;
  task?: string;
}

export function resolveModel(
  cfg: GatewayConfig,
  requested: unknown,
  tier: TierName,
  kind: ModelInfo['kind'],
  needs?: RequestNeeds,
  allowed?: ReadonlySet<string> | null,
): ModelPlan {
  if (typeof requested !== 'string' || requested === '') {
    throw new GatewayError('invalid_request', 'Field "model" is required and must be a string.', { param: 'model' });
  }
  if (requested === AUTO_MODEL && kind === 'chat' && needs) return autoRoute(cfg, tier, needs, allowed);
  const model = cfg.models.get(requested);
  if (!model || model.kind !== kind) {
    throw new GatewayError('model_not_found', `The model "${requested}" does not exist on this endpoint. GET /v1/models lists the models you can use.`, {
      param: 'model',
    });
  }
  if (!model.tiers.has(tier)) {
    throw new GatewayError('model_not_allowed', `The model "${requested}" is not available on the ${tier} tier.`, { param: 'model' });
  }
  checkAllowedModel(allowed, model.name); // the key's model allowlist (lib/keys)
  const fallbacks = model.fallbackModels
    .map((n) => cfg.models.get(n)!)
    .filter((m) => m.tiers.has(tier) && m.kind === kind && (!allowed || allowed.has(m.name)));
  return { models: [model, ...fallbacks], reason: null };
}

const largestWindow = new WeakMap<GatewayConfig, number>();

/** The largest context window in the catalogue: service-auto counts a prompt's tokens only this far. */
export function maxContextWindow(cfg: GatewayConfig): number {
  let max = largestWindow.get(cfg);
  if (max === undefined) {
    max = 0;
    for (const m of cfg.models.values()) if (m.contextWindow > max) max = m.contextWindow;
    largestWindow.set(cfg, max);
  }
  return max;
}

const taskTags: Record<string, string> = { code: 'code', coding: 'code', fast: 'fast', chat: 'chat', video: 'video' };

/**
 * service-auto: among the chat models this tier may use that have channels and fit the request
 * (context window, tools/JSON mode), prefer the task's tag, then the cheapest, then the fastest.
 */
function autoRoute(cfg: GatewayConfig, tier: TierName, needs: RequestNeeds, allowed?: ReadonlySet<string> | null): ModelPlan {
  const wantTag = needs.task ? taskTags[needs.task.toLowerCase()] : undefined;
  const candidates = [...cfg.models.values()].filter(
    (m) =>
      m.kind === 'chat' &&
      m.tiers.has(tier) &&
      (!allowed || allowed.has(m.name)) &&
      (cfg.channelsByModel.get(m.name)?.length ?? 0) > 0 &&
      !m.tags.includes('video') === (wantTag !== 'video') &&
      needs.promptTokens + (needs.maxOutputTokens ?? 0) <= m.contextWindow,
  );
  if (candidates.length === 0) {
    throw new GatewayError('model_not_found', `service-auto found no model on the ${tier} tier that fits this request (${needs.promptTokens} prompt tokens).`, {
      param: 'model',
    });
  }
  const price = (m: ModelInfo) => m.inputPrice + m.outputPrice;
  const score = (m: ModelInfo) => (wantTag && m.tags.includes(wantTag) ? 0 : 1);
  candidates.sort((a, b) => score(a) - score(b) || (price(a) < price(b) ? -1 : price(a) > price(b) ? 1 : 0) || (a.latencyMs ?? 1e9) - (b.latencyMs ?? 1e9));
  const chosen = candidates[0];
  const why = [
    wantTag ? (chosen.tags.includes(wantTag) ? `task "${needs.task}" matched tag ${wantTag}` : `no model tagged ${wantTag}`) : 'no task hint',
    `cheapest of ${candidates.length} candidate(s) fitting ${needs.promptTokens} prompt tokens`,
    needs.tools ? 'tools requested' : null,
    needs.json ? 'JSON mode requested' : null,
  ]
    .filter(Boolean)
    .join('; ');
  return { models: candidates.slice(0, 3), reason: `service-auto chose ${chosen.name}: ${why}` };
}
