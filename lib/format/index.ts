// The one place numbers become text for people: every page, chart, table and CSV of the dashboard
// formats money, tokens and context sizes here, so one figure reads the same everywhere.
// Money arrives as exact bigint pico units (1e-12 USD or CNY) and is written exactly, by formatMoney.
// Client-safe: no server imports.

import { formatPico, usdToPico } from '@/lib/money';

export type Currency = 'USD' | 'CNY';

const SYMBOL: Record<Currency, string> = { USD: '$', CNY: '¥' };

function groupThousands(whole: string): string {
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Plain decimal text without symbol or grouping, exact: CSV cells and JSON ("0.00001119", "12"). */
export const decimalText = (pico: bigint): string => formatPico(pico);

/**
 * The one money formatter: pages, tables, toasts, error messages, alert banners, the operator
 * console. Every digit there is, never rounded (a $9.9978 credit must not read $10.00, or the
 * history stops adding up to the balance): at least two decimals, grouped thousands, the sign
 * before the symbol ("$9.9978", "$1,234.50", "-$0.0000117", "¥1.944").
 */
export function formatMoney(pico: bigint, currency: Currency = 'USD'): string {
  const [whole, frac = ''] = formatPico(pico < 0n ? -pico : pico, 2).split('.');
  return `${pico < 0n ? '-' : ''}${SYMBOL[currency]}${groupThousands(whole!)}.${frac}`;
}

/** An amount the API wrote as decimal text ("10.0011"), through formatMoney; text that is no amount is shown as it is. */
export function formatMoneyText(text: string, currency: Currency = 'USD'): string {
  try {
    return formatMoney(usdToPico(text), currency);
  } catch {
    return text;
  }
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
