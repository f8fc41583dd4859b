// Speculative dispatch. The admission is one Redis round trip; on an idle path every hop costs a
// process wake-up, so waiting for it before calling the upstream adds the most to time to first
// byte. When the previous admission of the same account and rule set (at most SPECULATE_MAX_AGE_MS
// ago) left ample room on every limit and on the balance, the upstream call goes out at once and
// the admission runs alongside it. Nothing reaches the client, and nothing is billed, until the
// admission has succeeded; if it is refused after all (another instance used up the room in the
// meantime), the upstream call is cancelled and the client gets the refusal (429/402) as usual.
// Limits stay exact: every request is still admitted in Redis before it is answered. What
// speculation can cost is an upstream call cancelled early, for a request the room check allowed
// and Redis then refused; the margins below make that rare, and it never happens to an account
// near a limit or low on balance (those wait for the admission as before).
// This module keeps the room readings; startAdmission (admit.ts) decides per request.
import type { ModelInfo } from '@/lib/config';
import type { RuleState } from '@/lib/limits/types';
import type { Endpoint } from '@/lib/gateway/admission/rules';

/** Fraction of every limit that must still be free for a request to skip waiting for admission. */
const SPECULATE_MARGIN = 0.1;
/** The balance left must cover this many times the request's reservation. */
const SPECULATE_BALANCE_FACTOR = 10n;
/** A room reading older than this is not trusted. */
const SPECULATE_MAX_AGE_MS = 10_000;

export interface Headroom {
  at: number;
  /** Requests every limit could still take beyond its margin when last admitted. */
  requests: number;
  /** Balance left after the last admission's reservation, in pico-USD. */
  balance: bigint;
  /** Speculative admissions sent since and not answered yet (they use the room above). */
  pending: number;
  pendingReserve: bigint;
}

// One reading per account, endpoint and model (the rule set), refreshed by every admission.
const headroom = new Map<string, Headroom>();
const MAX_HEADROOM_ENTRIES = 100_000;

/** One room reading per account, endpoint and model (the rule set). */
export function headroomKey(userId: string, model: ModelInfo | null, endpoint: Endpoint): string {
  return `${userId}|${endpoint}|${model?.name ?? ''}`;
}

export function headroomOf(key: string): Headroom | undefined {
  return headroom.get(key);
}

/** A refused admission: its reading is dropped, so that the next request waits for its own. */
export function forgetHeadroom(key: string): void {
  headroom.delete(key);
}

/** Records the room an admission left (its rule states and the balance after its reservation). */
export function noteHeadroom(key: string, states: RuleState[], balance: bigint | undefined, reserve: bigint): void {
  let requests = Infinity;
  for (const s of states) {
    const margin = Math.ceil(s.limit * SPECULATE_MARGIN);
    // The token quota and tokens per minute count tokens, not requests: enough room left, or none at all.
    const room = s.rule.kind === 'quota' || s.rule.kind === 'tokens' ? (s.remaining > margin ? Infinity : 0) : s.remaining - margin;
    if (room < requests) requests = room;
  }
  if (balance === undefined && reserve > 0n) {
    headroom.delete(key);
    return;
  }
  const h = headroom.get(key);
  if (h) {
    h.at = Date.now();
    h.requests = requests;
    h.balance = balance ?? 0n;
    return;
  }
  if (headroom.size >= MAX_HEADROOM_ENTRIES) headroom.clear();
  headroom.set(key, { at: Date.now(), requests, balance: balance ?? 0n, pending: 0, pendingReserve: 0n });
}

/** Whether the reading leaves room for one more request of `reserve`, beyond the margins. */
export function maySpeculate(h: Headroom | undefined, reserve: bigint): h is Headroom {
  if (!h || Date.now() - h.at > SPECULATE_MAX_AGE_MS) return false;
  if (h.requests - h.pending < 1) return false;
  return h.balance - h.pendingReserve >= reserve * SPECULATE_BALANCE_FACTOR;
}
