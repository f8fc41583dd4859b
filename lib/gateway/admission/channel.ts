// Per-channel limits (operator config: channels[].concurrency, channels[].tpm), exact across
// instances: taken when the channel is chosen, by a limiter call of their own, one per attempt on a
// limited channel and none on the others. The first channel's call is started in the same
// event-loop turn as the admission, so on a single Redis both travel in one script call (the
// limiter batches a turn's calls) and on a cluster in parallel: the first attempt costs no round
// trip more. A channel at its cap is skipped (routing falls back to the next one); only when every
// candidate was at its cap is the request refused, with the 429 of the one that frees first
// (docs/decisions/030-finer-limits.md).
import type { ChannelInfo, GatewayConfig } from '@/lib/config';
import type { AdmitResult, Rule } from '@/lib/limits/types';
import { channelKey } from '@/lib/limits/keys';
import { channelLabel } from '@/lib/channels/labels';
import { getLimiter } from '@/lib/limits/runtime';
import { MINUTE } from '@/lib/gateway/admission/rules';
import { LEASE_TTL_MS, sendNow, tokenSettlements, trackLeases, untrackLeases, type Admission } from '@/lib/gateway/admission/lease';

/** Whether a channel has limits of its own (else choosing it costs nothing). */
export function channelLimited(channel: ChannelInfo): boolean {
  return channel.concurrency !== undefined || channel.tpm !== undefined;
}

// By name and figures: the router hands out copies of a channel (a weight override), not one object.
const ruleCache = new Map<string, Rule[]>();

/** A channel's rules; the labels name it as users see it (its public label, never its name). */
export function channelRules(channel: ChannelInfo, cfg: GatewayConfig): Rule[] {
  const id = `${channel.name}|${channel.concurrency ?? ''}|${channel.tpm ?? ''}|${channel.label ?? ''}`;
  let rules = ruleCache.get(id);
  if (rules) return rules;
  const label = `upstream channel "${channelLabel(channel.name, cfg)}"`;
  rules = [];
  if (channel.concurrency !== undefined)
    rules.push({
      kind: 'concurrency',
      key: channelKey(channel.name, 'conc'),
      limit: channel.concurrency,
      label: `${label}: ${channel.concurrency} concurrent requests`,
    });
  if (channel.tpm !== undefined)
    rules.push({
      kind: 'tokens',
      key: channelKey(channel.name, 'tpm'),
      limit: channel.tpm,
      windowMs: MINUTE,
      label: `${label}: ${channel.tpm} tokens per minute`,
    });
  if (ruleCache.size > 10_000) ruleCache.clear();
  ruleCache.set(id, rules);
  return rules;
}

export type ChannelRefusal = Extract<AdmitResult, { reason: 'limit' }>;

/**
 * Takes a place on a limited channel: its concurrency slot and its token reservation, as a lease
 * (renewed and released like an admission's). Answers the lease, or the refusal of a channel at
 * its cap. `urgent`: the call gates an upstream call (a fallback's): sent at once on a quiet instance.
 */
export async function acquireChannel(
  channel: ChannelInfo,
  cfg: GatewayConfig,
  leaseId: string,
  tokens: number,
  urgent: boolean,
): Promise<Admission | ChannelRefusal> {
  const rules = channelRules(channel, cfg);
  const result = await getLimiter().admit({
    rules,
    leaseId,
    leaseTtlMs: LEASE_TTL_MS,
    tokens: channel.tpm !== undefined ? tokens : undefined,
    urgent: sendNow(urgent, 'admit'),
  });
  if (!result.ok) {
    if (result.reason === 'limit') return result;
    throw new Error(`unexpected channel admission: ${result.reason}`);
  }
  const lease: Admission = {
    leaseId,
    userId: '',
    concurrencyKeys: rules.filter((r) => r.kind === 'concurrency').map((r) => r.key),
    reserved: 0n,
    headers: {},
    renewedAt: Date.now(),
  };
  const i = rules.findIndex((r) => r.kind === 'tokens');
  if (i >= 0 && tokens > 0) {
    lease.tokensReserved = tokens;
    lease.tokenReservations = [{ key: rules[i].key, windowMs: MINUTE, at: result.states[i].at ?? Date.now() }];
  }
  trackLeases(lease);
  return lease;
}

/** Frees a channel's slot and settles its token reservation to `used` tokens (0: the attempt failed before anything was generated). */
export function releaseChannel(lease: Admission, used: number, urgent = false): Promise<void> {
  untrackLeases(lease);
  return getLimiter()
    .release({
      leaseId: lease.leaseId,
      concurrencyKeys: lease.concurrencyKeys,
      tokens: tokenSettlements(lease.tokenReservations, lease.tokensReserved ?? 0, used),
      urgent: sendNow(urgent, 'release'),
    })
    .catch(() => undefined);
}
