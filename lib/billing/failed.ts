import { Prisma } from '@/lib/generated/prisma/client';

// One definition of a failed request for every count a person reads (the dashboard's "failed",
// the daily rollup, the log filter, the operator console): a request whose final outcome is
// anything but `ok` (answered, 2xx) or `client_closed` (the client left first, nobody's failure).
// A 400, 401, 402, 404, 429 or 5xx answer is failed. Channel health keeps its own upstream-error
// rate (5xx), which is about a channel, not about requests (decision 026).

/** The outcomes that are not failures. */
export const NOT_FAILED_OUTCOMES = ['ok', 'client_closed'] as const;

export function isFailedOutcome(outcome: string): boolean {
  return !(NOT_FAILED_OUTCOMES as readonly string[]).includes(outcome);
}

/** The condition as SQL text on "RequestLog" (or a CTE with its columns). */
export const FAILED_CONDITION = `"outcome" NOT IN (${NOT_FAILED_OUTCOMES.map((o) => `'${o}'`).join(', ')})`;

/** The same, for Prisma's tagged queries. */
export const failedSql = Prisma.raw(FAILED_CONDITION);
