import { formatMoney } from '@/lib/billing/money';

// Display formatting, shared by server and client components. Money arrives as exact bigint pico
// units and is rounded here, once. Times are shown in UTC, like the daily buckets and the filters.

function groupThousands(text: string): string {
  const [whole, frac] = text.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

function money(symbol: string, pico: bigint, decimals: number): string {
  const text = formatMoney(pico, decimals);
  return text.startsWith('-') ? `-${symbol}${groupThousands(text.slice(1))}` : `${symbol}${groupThousands(text)}`;
}

export const usd = (pico: bigint, decimals = 2) => money('$', pico, decimals);
export const cny = (pico: bigint, decimals = 2) => money('¥', pico, decimals);

/** Per-request amounts are fractions of a cent: six decimals, and a plain 0 when there was no charge. */
export const usdFine = (pico: bigint) => (pico === 0n ? '$0' : usd(pico, 6));
export const cnyFine = (pico: bigint) => (pico === 0n ? '¥0' : cny(pico, 6));

const intFormat = new Intl.NumberFormat('en-US');
const compactFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

export const int = (n: number) => intFormat.format(n);
export const compact = (n: number) => compactFormat.format(n);

/** `2026-11-22 09:41:07` (UTC). */
export const dateTime = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
/** `2026-11-22` (UTC). */
export const date = (d: Date) => d.toISOString().slice(0, 10);

export function latency(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const tierLabels: Record<string, string> = { free: 'Free', pro: 'Pro', vip: 'VIP', enterprise: 'Enterprise' };
export const tierLabel = (tier: string) => tierLabels[tier] ?? titleCase(tier);

/** Two decimals from a dollar up, four below, six below a hundredth of a cent, so small amounts never read $0.00. */
export function usdAuto(pico: bigint): string {
  const abs = pico < 0n ? -pico : pico;
  return usd(pico, abs === 0n || abs >= 1_000_000_000_000n ? 2 : abs >= 100_000_000n ? 4 : 6);
}

/** Context windows: 131072 reads 128K, 128000 reads 128K. */
export const tokenCount = (n: number) => (n >= 1024 && n % 1024 === 0 ? `${n / 1024}K` : compact(n));
