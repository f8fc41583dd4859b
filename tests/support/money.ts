// An independent exact-decimal parser for the tests (deliberately not the product's own money code).
export const PICO = 10n ** 12n;

/** "12.345" (up to 12 decimals, optional minus) -> pico-USD. */
export function pico(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,12}))?$/.exec(text.trim());
  if (!m) throw new Error(`not an exact decimal: ${JSON.stringify(text)}`);
  const v = BigInt(m[2]) * PICO + BigInt((m[3] ?? '').padEnd(12, '0') || '0');
  return m[1] ? -v : v;
}
