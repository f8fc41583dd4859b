// The one place numbers become text for people: every page, chart, table and CSV of the dashboard
// formats money, tokens and context sizes here, so one figure reads the same everywhere.
// Money arrives as exact bigint pico units (1e-12 USD or CNY) and is rounded here, once.
// Client-safe: no server imports.

export type Currency = 'USD' | 'CNY';

const PICO = 1_000_000_000_000n;
const SYMBOL: Record<Currency, string> = { USD: '$', CNY: '¥' };

/** How a figure is rounded to the digits shown: `nearest` (half away from zero) or `floor` (towards minus infinity). */
type Rounding = 'nearest' | 'floor';

function groupThousands(whole: string): string {
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `pico` rounded to `decimals` decimals and written with exactly that many (0-12). */
function fixed(pico: bigint, decimals: number, rounding: Rounding): string {
  const unit = 10n ** BigInt(12 - decimals);
  let units = pico / unit; // truncates towards zero
  const rest = pico % unit;
  if (rest !== 0n) {
    if (rounding === 'floor') {
      if (pico < 0n) units -= 1n;
    } else if ((rest < 0n ? -rest : rest) * 2n >= unit) {
      units += pico < 0n ? -1n : 1n;
    }
  }
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(decimals);
  const whole = groupThousands((abs / scale).toString());
  const frac = decimals > 0 ? `.${(abs % scale).toString().padStart(decimals, '0')}` : '';
  return `${negative ? '-' : ''}${whole}${frac}`;
}

const SIGNIFICANT = 3;

/**
 * Decimals to show for an amount: two from a dollar (or yuan) up; below it enough for three
 * significant digits (so $0.0011 and $0.00001119 never read $0.00), at most twelve.
 */
function decimalsFor(pico: bigint): number {
  const abs = pico < 0n ? -pico : pico;
  if (abs === 0n || abs >= PICO) return 2;
  const digits = abs.toString().length; // abs < 1e12, so at most 12
  return Math.min(12, Math.max(2, 12 - digits + SIGNIFICANT));
}

/** Trailing zeros beyond the second decimal are noise ("$0.0110" reads "$0.011"). */
function trimZeros(text: string): string {
  return text.replace(/(\.\d\d\d*?)0+$/, '$1');
}

function withSymbol(text: string, currency: Currency): string {
  return text.startsWith('-') ? `-${SYMBOL[currency]}${text.slice(1)}` : `${SYMBOL[currency]}${text}`;
}

function shortMoney(pico: bigint, currency: Currency, rounding: Rounding): string {
  return withSymbol(trimZeros(fixed(pico, decimalsFor(pico), rounding)), currency);
}

/**
 * Spend, costs and ledger amounts: two decimals from one unit up, three significant digits below
 * ("$12.35", "$0.15", "$0.0011", "$0.0000112"), rounded to nearest.
 */
export function formatAmount(pico: bigint, currency: Currency = 'USD'): string {
  return shortMoney(pico, currency, 'nearest');
}

/** A balance: the same digits as an amount, but never rounded up ($19.9989 reads $19.99). */
export function formatBalance(pico: bigint, currency: Currency = 'USD'): string {
  return shortMoney(pico, currency, 'floor');
}

/** Every digit there is, at least two decimals: log detail, tooltips, prices ("$0.60", "¥1.944", "$0.00001119"). */
export function formatExact(pico: bigint, currency: Currency = 'USD'): string {
  return withSymbol(trimZeros(fixed(pico, 12, 'nearest')), currency);
}

/** A price per million tokens; exact, like formatExact ("$0.15", "$0.60", "¥1.08"). */
export const formatPrice = formatExact;

/** A whole amount with fixed decimals, for round thresholds ("$50", "$500"). */
export function formatWhole(pico: bigint, currency: Currency = 'USD'): string {
  return pico % PICO === 0n ? withSymbol(fixed(pico, 0, 'nearest'), currency) : formatAmount(pico, currency);
}

/** Plain decimal text without symbol or grouping, exact: CSV cells and JSON ("0.00001119", "12"). */
export function decimalText(pico: bigint): string {
  const negative = pico < 0n;
  const abs = negative ? -pico : pico;
  const frac = (abs % PICO).toString().padStart(12, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / PICO}${frac ? `.${frac}` : ''}`;
}

const intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A count of requests or tokens, grouped ("8,191", "1,234,567"). */
export function formatCount(n: number): string {
  return intFormat.format(n);
}

/**
 * A size in tokens (context window, daily quota) the way model vendors write them: "128K" for
 * 128,000 and for 131,072 (2^17), "1M" for 1,000,000 and 1,048,576, "8K" for 8,192, and a figure
 * that is neither a round thousand nor a power-of-two multiple of 1,024 as it is ("8,191").
 */
export function formatTokenSize(n: number): string {
  if (!Number.isFinite(n) || n < 1000 || !Number.isInteger(n)) return formatCount(n);
  if (n % 1_000_000 === 0) return `${formatCount(n / 1_000_000)}M`;
  if (n % 1_048_576 === 0) return `${formatCount(n / 1_048_576)}M`;
  if (n % 1000 === 0) return `${formatCount(n / 1000)}K`;
  if (n % 1024 === 0) return `${formatCount(n / 1024)}K`;
  return formatCount(n);
}

const compactFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1, roundingMode: 'floor' } as Intl.NumberFormatOptions);

/** Chart axis ticks only, where space is short: "1.2K", "3M" (never rounded up). Tables and cards use formatCount. */
export function formatAxisCount(n: number): string {
  return compactFormat.format(n);
}

/** Axis ticks for money charts, from a number of units (bar heights are floats; labels are not figures). */
export function formatAxisMoney(units: number, currency: Currency = 'USD'): string {
  if (units === 0) return `${SYMBOL[currency]}0`;
  if (units >= 100) return `${SYMBOL[currency]}${formatCount(Math.round(units))}`;
  if (units >= 1) return `${SYMBOL[currency]}${Number(units.toFixed(1))}`;
  return `${SYMBOL[currency]}${Number(units.toPrecision(2))}`;
}

/** Bar heights for charts: a float of whole units. Never used as a shown figure. */
export function toChartNumber(pico: bigint): number {
  return Number(decimalText(pico));
}

export function formatLatency(ms: number): string {
  return ms < 1000 ? `${formatCount(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** `2026-11-22 09:41:07` (UTC). */
export const formatDateTimeUtc = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
/** `2026-11-22` (UTC). */
export const formatDateUtc = (d: Date) => d.toISOString().slice(0, 10);

const monthNames = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "Nov 3" from "2026-11-03", for chart axes. */
export const formatDayLabel = (day: string) => `${monthNames[Number(day.slice(5, 7)) - 1]} ${Number(day.slice(8, 10))}`;

export function formatBoolean(value: boolean): string {
  return value ? 'Yes' : 'No';
}
