// The per-account gate on work before admission (lib/gateway/account-gate.ts).
import { describe, expect, it } from 'vitest';
import { GatewayError } from '@/lib/errors';
import { gatedAccounts, MAX_ACTIVE, MAX_WAITING, preAdmission } from '@/lib/gateway/account-gate';

const never = new AbortController().signal;

function held() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
}

describe('pre-admission gate', () => {
  it('lets an account do pre-admission work MAX_ACTIVE at a time, in order, without holding up another account', async () => {
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    const holds = Array.from({ length: 6 }, held);
    const runs = holds.map((h, i) =>
      preAdmission('acct-a', never, async () => {
        active++;
        peak = Math.max(peak, active);
        order.push(i);
        await h.done;
        active--;
      }),
    );
    // Another account is not queued behind the first one's six.
    await preAdmission('acct-b', never, async () => undefined);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([0, 1]);
    for (const h of holds) h.release();
    await Promise.all(runs);
    expect(peak).toBe(MAX_ACTIVE);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(gatedAccounts()).toBe(0);
  });

  it('drops a waiting request whose client leaves, and refuses past MAX_WAITING', async () => {
    const h = held();
    const busy = Array.from({ length: MAX_ACTIVE }, () => preAdmission('acct-c', never, () => h.done));
    const ac = new AbortController();
    let ran = false;
    const leaving = preAdmission('acct-c', ac.signal, async () => {
      ran = true;
    });
    ac.abort();
    await expect(leaving).rejects.toThrow(/left/);
    const waiting = Array.from({ length: MAX_WAITING }, () => preAdmission('acct-c', never, async () => undefined));
    const refused = await preAdmission('acct-c', never, async () => undefined).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).status).toBe(429);
    h.release();
    await Promise.all([...busy, ...waiting]);
    expect(ran).toBe(false);
    expect(gatedAccounts()).toBe(0);
  });
});
