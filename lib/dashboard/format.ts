// Names the dashboard pages use, all answered by the one formatting module (lib/format).
import { formatCount, formatDateTimeUtc, formatDateUtc, formatLatency, formatMoney, formatTokenSize, formatAxisCount } from '@/lib/format';

export * from '@/lib/format';

export const usd = (pico: bigint) => formatMoney(pico, 'USD');
export const cny = (pico: bigint) => formatMoney(pico, 'CNY');

export const int = formatCount;
export const compact = formatAxisCount;
export const dateTime = formatDateTimeUtc;
export const date = formatDateUtc;
export const latency = formatLatency;
export const tokenCount = formatTokenSize;

export const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const tierLabels: Record<string, string> = { free: 'Free', pro: 'Pro', vip: 'VIP', enterprise: 'Enterprise' };
export const tierLabel = (tier: string) => tierLabels[tier] ?? titleCase(tier);
