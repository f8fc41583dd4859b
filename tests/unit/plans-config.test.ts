// Plans in the operator config (issue 42 item 1): validated at start with errors naming the field;
// windows anchored at the subscription's start, with their resets; which requests a plan pays.
import { describe, expect, it } from 'vitest';
import { buildConfig } from '@/lib/config';
import { effectiveTier, planFor, planUseOf, windowsAt } from '@/lib/plans/windows';
import { testConfig } from '../support/gateway';

const plan = (over: Record<string, unknown> = {}) => ({
  id: 'coder',
  name: 'Coder',
  price_usd_monthly: '20',
  windows: [
    { name: '5h', hours: 5, limit: '5' },
    { name: 'weekly', days: 7, limit: '40' },
  ],
  models: ['gpt-4o-mini'],
  ...over,
});
const build = (plans: unknown[]) => buildConfig(testConfig({ openaiUrls: ['http://127.0.0.1:1'], overrides: { plans } }), 'test.yaml');

describe('plans in the operator config', () => {
  it('reads prices, windows and models exactly', () => {
    const cfg = build([
      plan(),
      plan({ id: 'req', unit: 'requests', windows: [{ name: 'daily', days: 1, limit: '100' }], models: ['*'], tier: 'pro', overflow: 'refuse' }),
    ]);
    const p = cfg.plans.get('coder')!;
    expect(p.priceMonthly).toBe(20_000_000_000_000n);
    expect(p.windows).toEqual([
      { name: '5h', ms: 5 * 3_600_000, cap: 5_000_000_000_000n },
      { name: 'weekly', ms: 7 * 86_400_000, cap: 40_000_000_000_000n },
    ]);
    expect(p.overflow).toBe('balance');
    expect(cfg.plans.get('req')!.models).toBeNull();
    expect(cfg.plans.get('req')!.windows[0]!.cap).toBe(100n);
  });

  it.each([
    [{ models: ['no-such-model'] }, 'plans[0].models[0]: unknown model no-such-model'],
    [{ windows: [{ name: '5h', hours: 5, days: 1, limit: '5' }] }, 'plans[0].windows[0]: give the window exactly one of hours or days'],
    [
      {
        windows: [
          { name: '5h', hours: 5, limit: '5' },
          { name: '5h', hours: 6, limit: '5' },
        ],
      },
      'plans[0].windows[1].name: duplicate window 5h',
    ],
    [{ unit: 'requests', windows: [{ name: 'd', days: 1, limit: '1.5' }] }, 'plans[0].windows[0].limit: must be a whole number of requests'],
    [{ price_usd_monthly: '-1' }, 'plans[0].price_usd_monthly'],
    [{ overflow: 'maybe' }, 'plans[0].overflow'],
  ])('refuses %j naming the field', (over, message) => {
    expect(() => build([plan(over)])).toThrow(message);
  });

  it('refuses two plans of one id', () => {
    expect(() => build([plan(), plan()])).toThrow('plans[1].id: duplicate plan coder');
  });
});

describe('windows', () => {
  const cfg = build([plan()]);
  const p = cfg.plans.get('coder')!;
  const anchor = Date.UTC(2026, 10, 1, 9, 0, 0);

  it('are anchored at the start: the window containing now, and its reset', () => {
    const now = anchor + 12 * 3_600_000 + 1; // 12h in: the third 5h window [10h, 15h)
    const [five, week] = windowsAt(p, { subscriptionId: 's', anchor }, now, 'u');
    expect(five!.start).toBe(anchor + 10 * 3_600_000);
    expect(five!.end).toBe(anchor + 15 * 3_600_000);
    expect(week!.start).toBe(anchor);
    expect(week!.end).toBe(anchor + 7 * 86_400_000);
    // The plan, the window's length and its cap are in the counter's name: after an upgrade (the same
    // subscription) or an edit in the console the new caps count afresh.
    expect(five!.key).toBe('gw:{u:u}:plan:s:coder:5h:18000000:5000000000000:2');
    const other = { ...p, id: 'coder-max' };
    expect(windowsAt(other, { subscriptionId: 's', anchor }, now, 'u')[0]!.key).toBe('gw:{u:u}:plan:s:coder-max:5h:18000000:5000000000000:2');
    const raised = { ...p, windows: [{ ...p.windows[0]!, cap: 6_000_000_000_000n }, p.windows[1]!] };
    expect(windowsAt(raised, { subscriptionId: 's', anchor }, now, 'u')[0]!.key).not.toBe(five!.key);
    // The last millisecond of a window and the first of the next.
    expect(windowsAt(p, { subscriptionId: 's', anchor }, anchor + 5 * 3_600_000 - 1)[0]!.start).toBe(anchor);
    expect(windowsAt(p, { subscriptionId: 's', anchor }, anchor + 5 * 3_600_000)[0]!.start).toBe(anchor + 5 * 3_600_000);
  });

  it('pay for the models the plan covers, while it lasts', () => {
    const sub = { subscriptionId: 's', planId: 'coder', anchor, until: anchor + 30 * 86_400_000 };
    const mini = cfg.models.get('gpt-4o-mini')!;
    expect(planFor({ userId: 'u', plan: sub }, cfg, mini, anchor + 1)?.plan.id).toBe('coder');
    expect(planFor({ userId: 'u', plan: sub }, cfg, cfg.models.get('gpt-4o')!, anchor + 1)).toBeNull();
    expect(planFor({ userId: 'u', plan: sub }, cfg, mini, sub.until)).toBeNull();
    expect(planFor({ userId: 'u' }, cfg, mini, anchor + 1)).toBeNull();
  });

  it("count a request's use in the plan's unit", () => {
    expect(planUseOf(p, 123n, 40)).toBe(123n);
    expect(planUseOf({ ...p, unit: 'tokens' }, 123n, 40)).toBe(40n);
    expect(planUseOf({ ...p, unit: 'requests' }, 123n, 40)).toBe(1n);
    expect(planUseOf({ ...p, unit: 'requests' }, 0n, 0)).toBe(0n);
  });

  it('a plan raises the tier, never lowers it', () => {
    const withTier = build([plan({ tier: 'vip' })]);
    const sub = { subscriptionId: 's', planId: 'coder', anchor, until: Date.now() + 1e9 };
    expect(effectiveTier('free', sub, withTier)).toBe('vip');
    expect(effectiveTier('enterprise', sub, withTier)).toBe('enterprise');
    expect(effectiveTier('free', undefined, withTier)).toBe('free');
  });
});
