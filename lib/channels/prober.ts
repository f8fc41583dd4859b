import type { ChannelInfo, GatewayConfig } from '@/lib/config';
import { singleton } from '@/lib/singleton';

// The health and re-enable loops here probe channels, but a probe is a request upstream, which is
// the gateway's work (lib/gateway/probe.ts). The gateway sits above channels in the floor plan
// (tests/unit/layering.test.ts), so the loops are handed the probe when they start
// (startChannelOverrideSync in server.ts) instead of importing it.

export interface ProbeResult {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  model: string | null;
  /** Short, upstream-safe: the status line or the error class, never the channel's key. */
  detail: string;
}

export type ChannelProbe = (channel: ChannelInfo, cfg: GatewayConfig, timeoutMs?: number) => Promise<ProbeResult>;

// Process-wide: Next's bundle and the custom server's each carry their own copy of this module.
const slot = () => singleton('channel-probe', () => ({ probe: undefined as ChannelProbe | undefined }));

export function setChannelProbe(probe: ChannelProbe): void {
  slot().probe = probe;
}

/** Probes through the gateway's probe; before the loops were started with one, a failed probe (never a throw). */
export async function probeChannel(channel: ChannelInfo, cfg: GatewayConfig, timeoutMs?: number): Promise<ProbeResult> {
  const { probe } = slot();
  if (!probe) return { ok: false, status: null, latencyMs: 0, model: null, detail: 'no channel probe set' };
  return probe(channel, cfg, timeoutMs);
}
