import { describe, it, expect } from 'vitest';
import { usdToPico } from '@/lib/billing/money';
import { decimalText, formatAmount, formatBalance, formatCount, formatExact, formatPrice, formatTokenSize, formatWhole } from '@/lib/format';

const p = usdToPico;

describe('formatAmount', () => {
  it('shows amounts below a cent with three significant digits, never $0.00', () => {
    expect(formatAmount(p('0.0011'))).toBe('$0.0011');
    expect(formatAmount(p('0.0011'), 'CNY')).toBe('¥0.0011');
    expect(formatAmount(p('0.00001119'))).toBe('$0.0000112');
    expect(formatAmount(p('0.000000000001'))).toBe('$0.000000000001');
  });

  it('shows two decimals from one unit up, rounded to nearest', () => {
    expect(formatAmount(p('12.345'))).toBe('$12.35');
    expect(formatAmount(p('1234567.891'))).toBe('$1,234,567.89');
    expect(formatAmount(p('1'))).toBe('$1.00');
    expect(formatAmount(0n)).toBe('$0.00');
  });

  it('keeps at least two decimals and drops noise zeros below one unit', () => {
    expect(formatAmount(p('0.15'))).toBe('$0.15');
    expect(formatAmount(p('0.5'))).toBe('$0.50');
    expect(formatAmount(p('0.011'))).toBe('$0.011');
    expect(formatAmount(p('0.1234'))).toBe('$0.123');
  });

  it('writes negative amounts with the sign before the symbol', () => {
    expect(formatAmount(-p('0.0011'))).toBe('-$0.0011');
    expect(formatAmount(-p('2.5'))).toBe('-$2.50');
  });
});

describe('formatBalance', () => {
  it('never rounds a balance up', () => {
    expect(formatBalance(p('19.9989'))).toBe('$19.99');
    expect(formatBalance(p('19.999999999999'))).toBe('$19.99');
    expect(formatBalance(p('0.0019999'))).toBe('$0.00199');
    expect(formatBalance(-p('0.001'))).toBe('-$0.001');
    expect(formatBalance(-p('1.001'))).toBe('-$1.01');
  });
});

describe('exact figures and prices', () => {
  it('shows every digit, at least two decimals', () => {
    expect(formatExact(p('0.00001119'))).toBe('$0.00001119');
    expect(formatPrice(p('0.6'))).toBe('$0.60');
    expect(formatPrice(p('1.944'), 'CNY')).toBe('¥1.944');
    expect(formatPrice(p('10'))).toBe('$10.00');
    expect(decimalText(p('0.00001119'))).toBe('0.00001119');
    expect(decimalText(-p('12'))).toBe('-12');
  });

  it('writes round thresholds without decimals', () => {
    expect(formatWhole(p('50'))).toBe('$50');
    expect(formatWhole(p('1500'))).toBe('$1,500');
    expect(formatWhole(p('49.5'))).toBe('$49.50');
  });
});

describe('token sizes', () => {
  it('reads 128,000 tokens as 128K the way model vendors do, and 8,191 as it is', () => {
    expect(formatTokenSize(128_000)).toBe('128K');
    expect(formatTokenSize(131_072)).toBe('128K');
    expect(formatTokenSize(8_192)).toBe('8K');
    expect(formatTokenSize(8_191)).toBe('8,191');
    expect(formatTokenSize(200_000)).toBe('200K');
    expect(formatTokenSize(1_000_000)).toBe('1M');
    expect(formatTokenSize(1_048_576)).toBe('1M');
    expect(formatTokenSize(100_000)).toBe('100K');
    expect(formatTokenSize(512)).toBe('512');
    expect(formatTokenSize(64_500)).toBe('64,500');
  });

  it('groups counts', () => {
    expect(formatCount(1234567)).toBe('1,234,567');
  });
});
