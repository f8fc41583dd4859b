// Money is integer pico-units (1e-12 of a USD or CNY) in bigint, end to end; it is formatted once, at display.

export const PICO = 1_000_000_000_000n;

/** Parses a non-negative decimal string ("0.015", "7.2") into an integer at 10^-scale units, exactly. */
export function parseDecimal(value: string, scale: number): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!match) throw new Error(`not a decimal: ${value}`);
  const [, sign, whole, frac = ''] = match;
  if (frac.length > scale) throw new Error(`${value} has more than ${scale} decimals`);
  const units = BigInt(whole) * 10n ** BigInt(scale) + BigInt(frac.padEnd(scale, '0') || '0');
  return sign === '-' ? -units : units;
}

export const usdToPico = (usd: string): bigint => parseDecimal(usd, 12);

/** A Decimal column's amount: through toFixed, since toString() writes 1e-8 and 1e+21, which no parser here takes. */
export const decimalToPico = (d: { toFixed(n: number): string }): bigint => usdToPico(d.toFixed(12));

/** Exact decimal text of a pico amount, trailing zeros trimmed ("0.00042", "12", "-0.5"). */
export function formatPico(pico: bigint, minDecimals = 0): string {
  const negative = pico < 0n;
  const abs = negative ? -pico : pico;
  const whole = abs / PICO;
  let frac = (abs % PICO).toString().padStart(12, '0').replace(/0+$/, '');
  if (frac.length < minDecimals) frac = frac.padEnd(minDecimals, '0');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** USD -> CNY at a rate given in units of 1e-9 (so "7.2" is 7_200_000_000n), rounded half up. */
export function usdToCny(usdPico: bigint, rateNano: bigint): bigint {
  const product = usdPico * rateNano;
  return (product + 500_000_000n) / 1_000_000_000n;
}
