// Automatic tier promotion by spend in the current UTC month, against the real PostgreSQL.
// Usage ledger entries are written here the way the gateway's batch writer writes them: kind
// 'usage' with a NEGATIVE amount.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db';
import { getConfig, type TierName } from '@/lib/config';
import { formatPico, PICO } from '@/lib/money';
import { picoToDecimal } from '@/lib/billing/ledger';
import { monthlySpend, promoteByMonthlySpend } from '@/lib/billing/promotion';
import { closeEvents, onGatewayEvent, type GatewayEvent } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const CENT = PICO / 100n;
const now = new Date();
const events: GatewayEvent[] = [];
let db: Awaited<ReturnType<typeof getDb>>;
let proThreshold: bigint;
let vipThreshold: bigint;

beforeAll(async () => {
  db = await getDb();
  proThreshold = getConfig().tiers.pro.promoteAtMonthlySpend as bigint;
  vipThreshold = getConfig().tiers.vip.promoteAtMonthlySpend as bigint;
  onGatewayEvent((e) => events.push(e));
});

afterAll(async () => {
  await getLimiter().close();
  await closeEvents();
  await db.$disconnect();
});

async function makeUser(tier: TierName = 'free', tierLocked = false) {
  return db.user.create({ data: { email: `promo-${randomUUID().slice(0, 12)}@test.local`, passwordHash: 'x', tier, tierLocked } });
}

/** Spend split over several usage entries (negative amounts), all at `at`. */
async function spend(userId: string, total: bigint, parts = 3, at = now) {
  const piece = total / BigInt(parts);
  const amounts = Array.from({ length: parts }, (_, i) => (i === parts - 1 ? total - piece * BigInt(parts - 1) : piece));
  for (const amount of amounts) {
    await db.ledgerEntry.create({
      data: { userId, kind: 'usage', amountUsd: picoToDecimal(-amount), balanceAfterUsd: 0, reference: `req_${randomUUID()}`, createdAt: at },
    });
  }
}

const tierOf = async (userId: string) => (await db.user.findUniqueOrThrow({ where: { id: userId } })).tier;

describe('promoteByMonthlySpend', () => {
  it('the example config promotes at $50 (pro) and $500 (vip)', () => {
    expect(formatPico(proThreshold)).toBe('50');
    expect(formatPico(vipThreshold)).toBe('500');
  });

  it('promotes a free user whose usage this month sums exactly to the pro threshold, and announces it', async () => {
    const user = await makeUser();
    await spend(user.id, proThreshold);
    expect(await monthlySpend(user.id, now)).toBe(proThreshold);

    const promotions = await promoteByMonthlySpend([user.id], now);
    expect(promotions).toEqual([{ userId: user.id, from: 'free', to: 'pro', monthlySpend: proThreshold }]);
    expect(await tierOf(user.id)).toBe('pro');
    expect(events).toContainEqual({ type: 'account-changed', userId: user.id });
  });

  it('does not promote a free user one cent below the pro threshold', async () => {
    const user = await makeUser();
    await spend(user.id, proThreshold - CENT);
    expect(await promoteByMonthlySpend([user.id], now)).toEqual([]);
    expect(await tierOf(user.id)).toBe('free');
  });

  it('does not promote a user whose tier an operator locked', async () => {
    const user = await makeUser('free', true);
    await spend(user.id, vipThreshold * 2n);
    expect(await promoteByMonthlySpend([user.id], now)).toEqual([]);
    expect(await tierOf(user.id)).toBe('free');
  });

  it('never demotes an enterprise user, whatever the spend', async () => {
    const idle = await makeUser('enterprise');
    const busy = await makeUser('enterprise');
    await spend(busy.id, vipThreshold * 3n);
    expect(await promoteByMonthlySpend([idle.id, busy.id], now)).toEqual([]);
    expect(await tierOf(idle.id)).toBe('enterprise');
    expect(await tierOf(busy.id)).toBe('enterprise');
  });

  it('does not demote a vip user whose spend is below the vip threshold', async () => {
    const user = await makeUser('vip');
    await spend(user.id, proThreshold);
    expect(await promoteByMonthlySpend([user.id], now)).toEqual([]);
    expect(await tierOf(user.id)).toBe('vip');
  });

  it('promotes straight to the highest tier reached (free to vip), never to enterprise', async () => {
    const user = await makeUser();
    await spend(user.id, vipThreshold * 100n);
    const promotions = await promoteByMonthlySpend([user.id, user.id], now);
    expect(promotions).toHaveLength(1);
    expect(promotions[0]).toMatchObject({ from: 'free', to: 'vip' });
    expect(await tierOf(user.id)).toBe('vip');
  });

  it('counts only usage entries of the current UTC month', async () => {
    const user = await makeUser();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1000);
    await spend(user.id, proThreshold, 2, lastMonth);
    await spend(user.id, proThreshold - CENT, 2);
    await db.ledgerEntry.create({ data: { userId: user.id, kind: 'recharge', amountUsd: 100, balanceAfterUsd: 100 } });

    expect(await monthlySpend(user.id, now)).toBe(proThreshold - CENT);
    expect(await promoteByMonthlySpend([user.id], now)).toEqual([]);
    expect(await tierOf(user.id)).toBe('free');
  });

  it('handles a batch: promotes those who qualify, leaves the rest', async () => {
    const a = await makeUser();
    const b = await makeUser();
    const c = await makeUser('pro');
    await spend(a.id, proThreshold + CENT);
    await spend(b.id, CENT);
    await spend(c.id, vipThreshold);
    const promotions = await promoteByMonthlySpend([a.id, b.id, c.id], now);
    expect(new Map(promotions.map((p) => [p.userId, p.to]))).toEqual(
      new Map([
        [a.id, 'pro'],
        [c.id, 'vip'],
      ]),
    );
    expect(await tierOf(b.id)).toBe('free');
  });

  it('returns nothing for an empty batch', async () => {
    expect(await promoteByMonthlySpend([], now)).toEqual([]);
  });
});
