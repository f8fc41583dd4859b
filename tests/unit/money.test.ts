import { describe, it, expect } from 'vitest';
import { formatPico, parseDecimal, usdToCny, usdToPico } from '@/lib/money';
import { costOf, noUsage } from '@/lib/billing/cost';
import { loadConfigFile } from '@/lib/config';

describe('money', () => {
  it('parses and formats decimals exactly', () => {
    expect(usdToPico('0.015')).toBe(15_000_000_000n);
    expect(formatPico(usdToPico('12.000000000001'))).toBe('12.000000000001');
    expect(formatPico(-500_000_000_000n)).toBe('-0.5');
    expect(() => parseDecimal('1.5e3', 6)).toThrow();
  });

  it('converts USD to CNY at the configured rate, rounding once', () => {
    expect(usdToCny(usdToPico('1'), 7_200_000_000n)).toBe(usdToPico('7.2'));
    expect(usdToCny(3n, 7_200_000_000n)).toBe(22n); // 21.6 pico rounds half up
  });

  it('prices each token class at its own rate', () => {
    const sonnet = loadConfigFile('config/gateway.example.yaml').models.get('claude-sonnet-4-5')!;
    const usage = { ...noUsage(), promptTokens: 1000, completionTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 100 };
    // 1000*3 + 500*15 + 2000*0.3 + 100*3.75 = 3000 + 7500 + 600 + 375 = 11475 micro-USD
    expect(formatPico(costOf(sonnet, usage))).toBe('0.011475');
  });
});
