import { describe, it, expect } from 'vitest';
import { z } from 'zod';
import { hashCode, normaliseCode } from '@/lib/admin/redemption';
import { usdAmount } from '@/lib/admin/input';
import { toJson } from '@/lib/admin/serialize';
import { applyChannelOverrides } from '@/lib/channels/overrides';
import { orderChannels } from '@/lib/gateway/router';
import { singleton } from '@/lib/singleton';
import type { ChannelInfo } from '@/lib/config';

describe('redemption code normalisation', () => {
  it('ignores case, spaces and dashes, and reads O, I and L as 0, 1 and 1', () => {
    const code = 'GW-AB0C1-DEF23-GH456-JK789';
    expect(normaliseCode(code)).toBe('AB0C1DEF23GH456JK789');
    expect(normaliseCode(' gw ab0c1 def23-gh456 jk789 ')).toBe('AB0C1DEF23GH456JK789');
    expect(normaliseCode('ABOCI-DEF23-GH456-JK789')).toBe('AB0C1DEF23GH456JK789');
    expect(hashCode('ab0c1def23gh456jk789')).toBe(hashCode(code));
  });

  it('keeps a code whose own characters start with GW when typed without the prefix', () => {
    expect(normaliseCode('GWXYZ-00000-00000-00000')).toBe('GWXYZ000000000000000');
  });
});

describe('admin API amounts', () => {
  const parse = (v: unknown) => usdAmount.safeParse(v);
  it('reads USD decimal text or numbers exactly, with a sign for debits', () => {
    expect(parse('2.5').data).toBe(2_500_000_000_000n);
    expect(parse('-0.000000000001').data).toBe(-1n);
    expect(parse(1.25).data).toBe(1_250_000_000_000n);
  });
  it('refuses exponents, excess decimals and text', () => {
    for (const bad of ['1e3', '0.0000000000001', 'ten', '', '--1', 1e21]) expect(parse(bad).success).toBe(false);
    expect(z.object({ a: usdAmount }).safeParse({ a: null }).success).toBe(false);
  });
});

describe('admin JSON', () => {
  it('turns pico fields into exact USD/CNY text and other bigints into text', () => {
    expect(toJson({ spendPico: 1_500_000n, spendCnyPico: 10n, count: 3n, at: new Date(0), list: [{ amountPico: -2_000_000_000_000n }] })).toEqual({
      spendUsd: '0.0000015',
      spendCny: '0.00000000001',
      count: '3',
      at: '1970-01-01T00:00:00.000Z',
      list: [{ amountUsd: '-2' }],
    });
  });
});

describe('runtime channel overrides in the router', () => {
  const channel = (name: string, weight: number): ChannelInfo => ({
    name,
    protocol: 'openai',
    baseUrl: 'http://127.0.0.1:1/v1',
    apiKey: 'k',
    models: ['m'],
    priority: 1,
    weight,
    timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000 },
  });
  // The in-memory copy the sync keeps (lib/channels/overrides.ts), set directly here.
  const overrides = () =>
    singleton<{ map: Map<string, { disabled: boolean; weight?: number; updatedAt: string }> }>('channel-overrides', () => ({ map: new Map() })).map;
  const first = () => () => 0;

  it('skips a disabled channel and applies a weight override; no override leaves the list as it was', () => {
    const list = [channel('a', 1), channel('b', 1)];
    overrides().clear();
    expect(applyChannelOverrides(list)).toBe(list);
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['a', 'b']);
    overrides().set('a', { disabled: false, weight: 0, updatedAt: '' });
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['b', 'a']);
    overrides().set('a', { disabled: true, updatedAt: '' });
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['b']);
    overrides().set('b', { disabled: true, updatedAt: '' });
    expect(orderChannels(list)).toEqual([]);
    overrides().clear();
  });
});
