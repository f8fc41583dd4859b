import { describe, it, expect } from 'vitest';
import { usdToPico } from '@/lib/money';
import { decimalText, formatCount, formatMoney, formatMoneyText, formatTokenSize } from '@/lib/format';

const p = usdToPico;

describe('formatMoney, the one money formatter', () => {
  it('writes every digit and never rounds ($9.9978 stays $9.9978, not $10.00)', () => {
    expect(formatMoney(p('9.9978'))).toBe('$9.9978');
    expect(formatMoney(p('10.0011'))).toBe('$10.0011');
    expect(formatMoney(p('19.9989'))).toBe('$19.9989');
    expect(formatMoney(p('19.99232607'))).toBe('$19.99232607');
    expect(formatMoney(p('0.0000117'))).toBe('$0.0000117');
    expect(formatMoney(p('0.000000000001'))).toBe('$0.000000000001');
    expect(formatMoney(p('19.999999999999'))).toBe('$19.999999999999');
  });

  it('keeps two decimals at least, groups thousands, puts the sign before the symbol', () => {
    expect(formatMoney(0n)).toBe('$0.00');
    expect(formatMoney(p('0.5'))).toBe('$0.50');
    expect(formatMoney(p('10'))).toBe('$10.00');
    expect(formatMoney(p('1234567.891'))).toBe('$1,234,567.891');
    expect(formatMoney(-p('0.0000117'))).toBe('-$0.0000117');
    expect(formatMoney(-p('2.5'))).toBe('-$2.50');
    expect(formatMoney(p('1.944'), 'CNY')).toBe('¥1.944');
  });

  it('formats decimal text the API wrote, and leaves text that is no amount alone', () => {
    expect(formatMoneyText('10.0011')).toBe('$10.0011');
    expect(formatMoneyText('0.002')).toBe('$0.002');
    expect(formatMoneyText('')).toBe('');
    expect(formatMoneyText('n/a')).toBe('n/a');
  });

  it('writes plain decimal text for CSV and JSON', () => {
    expect(decimalText(p('0.00001119'))).toBe('0.00001119');
    expect(decimalText(-p('12'))).toBe('-12');
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
