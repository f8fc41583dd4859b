// An admission's leases: its concurrency slots and its balance (and key budget) reservations, held
// while the request runs, renewed for long streams, and released with the request's real cost.
import { env } from '@/lib/env';
import { inc } from '@/lib/metrics';
import { getLimiter } from '@/lib/limits/runtime';
import { balanceKey } from '@/lib/limits/keys';
import { DAY } from '@/lib/gateway/admission/rules';
import type { TokenSettlement } from '@/lib/limits/types';
import type { PlanInfo } from '@/lib/config';
import { planUseOf } from '@/lib/plans/windows';

/** A token reservation of an admission (a tokens rule that admitted): settled by the release to what was used. */
export interface TokenReservation {
  key: string;
  windowMs: number;
  /** When it was counted (RuleState.at). */
  at: number;
}

/** The settlements of token reservations of `reserved` tokens each, `used` tokens used. */
export function tokenSettlements(reservations: TokenReservation[] | undefined, reserved: number, used: number): TokenSettlement[] | undefined {
  if (!reservations?.length || used === reserved) return undefined;
  return reservations.map((r) => ({ key: r.key, windowMs: r.windowMs, at: r.at, delta: used - reserved }));
}

export interface Admission {
  leaseId: string;
  userId: string;
  concurrencyKeys: string[];
  quotaKey?: string;
  reserved: bigint;
  /** The key's budget counters the reservation was also taken against (lib/auth/admission.ts). */
  budgetKeys?: string[];
  /** Tokens reserved by each tokens rule (TPM: the key's, the model's), and where. */
  tokensReserved?: number;
  tokenReservations?: TokenReservation[];
  headers: Record<string, string>;
  /** When the leases were last set to live LEASE_TTL_MS from then. */
  renewedAt: number;
  /**
   * Paid by the account's plan (lib/plans): `key` is its first window's counter, which stands for the
   * balance (the others are budgetKeys); `reserved` is in the plan's unit, settled to the request's use.
   */
  plan?: { info: PlanInfo; key: string };
}

/** The counter that holds the reservation: the plan's first window, or the balance. */
const reservationKey = (a: Admission): string => a.plan?.key ?? balanceKey(a.userId);

export const LEASE_TTL_MS = env.LEASE_TTL_MS;

// Long streams keep their leases alive (concurrency slots and the balance reservation); a crashed
// instance's leases expire after LEASE_TTL_MS, and its reservations then return to the balance.
// One interval renews every admission whose leases are a third of their TTL old (so a lease is
// renewed at most two thirds into its life), instead of a timer per request.
const RENEW_EVERY_MS = LEASE_TTL_MS / 3;
const live = new Set<Admission>();
let renewer: NodeJS.Timeout | undefined;

/** Channel places among `live` (admission/channel.ts: userId ''): not requests of their own for quiet(). */
let channelPlaces = 0;

export function trackLeases(admission: Admission): void {
  if (!live.has(admission) && admission.userId === '') channelPlaces++;
  live.add(admission);
  if (renewer) return;
  renewer = setInterval(renewLeases, RENEW_EVERY_MS);
  renewer.unref();
}

export function untrackLeases(admission: Admission): void {
  if (live.delete(admission) && admission.userId === '') channelPlaces--;
}

function renewLeases(): void {
  const now = Date.now();
  const limiter = getLimiter();
  for (const a of live) {
    if (now - a.renewedAt < RENEW_EVERY_MS) continue;
    a.renewedAt = now;
    // The balance reservation is a lease too: renewed with the concurrency leases.
    void limiter.renew(a.concurrencyKeys, a.leaseId, LEASE_TTL_MS, { key: reservationKey(a), amount: a.reserved }).catch(() => undefined);
    for (const k of a.budgetKeys ?? []) void limiter.renew([], a.leaseId, LEASE_TTL_MS, { key: k, amount: a.reserved }).catch(() => undefined);
  }
  if (live.size === 0) {
    clearInterval(renewer);
    renewer = undefined;
  }
}

/**
 * Fewer requests than this in progress on this instance (admitted and not yet released, or being
 * admitted) make it quiet: there, by default, non-streaming requests speculate too (admit.ts).
 */
const QUIET_BELOW = 4;
/** Admissions on their way to the limiter (`live` holds the admitted ones). */
let admitting = 0;

/** An admission left for the limiter (counted by quiet() until admissionAnswered()). */
export function admissionSent(): void {
  admitting++;
}

export function admissionAnswered(): void {
  admitting--;
}

/**
 * True while this instance is quiet (QUIET_BELOW). Only then does a limiter call that a client is
 * waiting for go to Redis at once (`urgent`); on a busy instance it travels with the event-loop
 * turn's batch, which leaves in the same turn anyway: an urgent write costs a socket write of its
 * own, which with hundreds of concurrent streams was a large share of the gateway's CPU
 * (docs/decisions/008-urgent-limiter-calls.md).
 */
export function quiet(): boolean {
  return live.size - channelPlaces + admitting < QUIET_BELOW;
}

/** Whether a limiter call that asks to be urgent is sent at once: only on a quiet instance (counted). */
export function sendNow(urgent: boolean, call: 'admit' | 'release'): boolean {
  if (!urgent || !quiet()) return false;
  inc('gateway_limiter_urgent_total', { call });
  return true;
}

/**
 * Frees the concurrency slots at once while the request still has work left (a stream whose client
 * went away is drained for its usage): the leases are cut to expire now. Shortening them (rather than
 * releasing) keeps the final release() routed to the limiter that admitted the request.
 */
export function expireLeases(admission: Admission): void {
  untrackLeases(admission);
  void getLimiter()
    .renew(admission.concurrencyKeys, admission.leaseId, 1)
    .catch(() => undefined);
}

/**
 * Frees the leases, settles the reservation to the real cost and counts tokens for the daily quota.
 * `urgent` sends it at once rather than with the event-loop turn's batch (ReleaseInput.urgent),
 * if this instance is quiet (see quiet()). `chargeId`: the charge's fixed id when the same work
 * may be admitted again (a batch line after a takeover): it is charged to the live balance once.
 */
export async function release(admission: Admission, cost: bigint, tokens: number, urgent = false, chargeId?: string): Promise<void> {
  urgent = sendNow(urgent, 'release');
  untrackLeases(admission);
  // On a plan the windows settle to the request's use in the plan's unit; the balance is untouched.
  const used = admission.plan ? planUseOf(admission.plan.info, cost, tokens) : cost;
  await getLimiter()
    .release({
      leaseId: admission.leaseId,
      concurrencyKeys: admission.concurrencyKeys,
      // With `reserved`: the reservation lease is settled exactly once, whatever became of it.
      settle: { key: reservationKey(admission), delta: admission.reserved - used, reserved: admission.reserved },
      chargeId,
      budgets: admission.budgetKeys?.map((key) => ({ key, delta: admission.reserved - used, reserved: admission.reserved })),
      usage: admission.quotaKey && tokens > 0 ? [{ key: admission.quotaKey, windowMs: DAY, amount: tokens }] : undefined,
      tokens: tokenSettlements(admission.tokenReservations, admission.tokensReserved ?? 0, tokens),
      urgent,
    })
    .catch(() => undefined);
}
