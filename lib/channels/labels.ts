// What users are told about the upstream that served them: the channel's public `label` from the
// operator config, or a generic name for its protocol. Internal channel names (`openai-main`,
// `siliconflow`) are the operator's and stay in the console.
import { getConfig, type GatewayConfig } from '@/lib/config';

const GENERIC: Record<string, string> = { openai: 'OpenAI-compatible', anthropic: 'Anthropic', gemini: 'Google Gemini' };
/** A channel no longer in the config (renamed or removed since the request). */
const UNKNOWN = 'Upstream provider';

const byConfig = new WeakMap<GatewayConfig, Map<string, string>>();

function labels(cfg: GatewayConfig): Map<string, string> {
  let map = byConfig.get(cfg);
  if (!map) byConfig.set(cfg, (map = new Map(cfg.channels.map((c) => [c.name, c.label ?? GENERIC[c.protocol] ?? UNKNOWN]))));
  return map;
}

/** The public label of channel `name` (null stays null: no channel was tried). */
export function channelLabel(name: string | null, cfg: GatewayConfig = getConfig()): string | null {
  return name === null ? null : (labels(cfg).get(name) ?? UNKNOWN);
}

const headerSafe = new Map<string, string>();

/**
 * The channel's public label as an `X-Service-Provider` value. A header carries only visible ASCII, so a
 * label in another script (an operator's Chinese label) is percent-encoded (decodeURIComponent reads it).
 */
export function providerHeader(name: string, cfg: GatewayConfig = getConfig()): string {
  const label = channelLabel(name, cfg)!;
  let value = headerSafe.get(label);
  if (value === undefined) {
    value = /^[\x20-\x7e]*$/.test(label) ? label : encodeURIComponent(label);
    if (headerSafe.size < 1000) headerSafe.set(label, value);
  }
  return value;
}

/** A log's attempt records with each channel name replaced by its label (anything else kept as it is). */
export function publicAttempts(attempts: unknown, cfg: GatewayConfig = getConfig()): unknown {
  if (!Array.isArray(attempts)) return attempts;
  return attempts.map((a: unknown) =>
    typeof a === 'object' && a !== null && !Array.isArray(a) && typeof (a as { channel?: unknown }).channel === 'string'
      ? { ...a, channel: channelLabel((a as { channel: string }).channel, cfg) }
      : a,
  );
}
