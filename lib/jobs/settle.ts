// A job's charge, settled exactly once whichever instance ends it: the log row (its usage charge)
// is written at once under the job's own id (writeLogsNow: a second write of it is neither logged
// nor charged), then the balance reservation taken at admission is settled on the live balance
// (the limiter settles a reservation lease once: replayed, it does nothing; expired with its
// instance, it charges the cost alone).
import type { Admission } from '@/lib/gateway/admission';
import { release } from '@/lib/gateway/admission';
import { balanceKey, getLimiter } from '@/lib/gateway/runtime';
import { LEASE_TTL_MS } from '@/lib/gateway/admission/lease';
import { writeLogsNow } from '@/lib/billing/writer';
import { getDb } from '@/lib/db';
import { cnyOf } from '@/lib/billing/cost';
import { getConfig } from '@/lib/config';
import type { StoredBreakdown } from '@/lib/billing/breakdown';

/** What a job keeps of its admission: enough to renew and settle it from any instance. */
export interface JobLease {
  leaseId: string;
  /** pico-USD, as decimal text (JSON has no bigint). */
  reserved: string;
  concurrencyKeys: string[];
  budgetKeys?: string[];
}

export function leaseOf(a: Admission): JobLease {
  return { leaseId: a.leaseId, reserved: a.reserved.toString(), concurrencyKeys: a.concurrencyKeys, budgetKeys: a.budgetKeys };
}

function admissionOf(userId: string, lease: JobLease): Admission {
  return {
    leaseId: lease.leaseId,
    userId,
    concurrencyKeys: lease.concurrencyKeys,
    reserved: BigInt(lease.reserved),
    budgetKeys: lease.budgetKeys,
    headers: {},
    renewedAt: Date.now(),
  };
}

/** Keeps a running job's reservation and concurrency slots alive (they expire with a dead instance otherwise). */
export async function renewJobLease(userId: string, lease: JobLease): Promise<void> {
  const limiter = getLimiter();
  const amount = BigInt(lease.reserved);
  await limiter.renew(lease.concurrencyKeys, lease.leaseId, LEASE_TTL_MS, { key: balanceKey(userId), amount }).catch(() => undefined);
  for (const k of lease.budgetKeys ?? []) await limiter.renew([], lease.leaseId, LEASE_TTL_MS, { key: k, amount }).catch(() => undefined);
}

export interface JobCharge {
  /** The log row's id (the job's id): the key of the settlement. */
  id: string;
  createdAt: Date;
  userId: string;
  apiKeyId: string | null;
  endpoint: string;
  model: string;
  channel: string | null;
  /** The region of the channel that served, if it has one (RequestLog.region). */
  region?: string | null;
  status: number;
  outcome: string;
  errorCode: string | null;
  cost: bigint;
  latencyMs: number;
  attempts?: unknown[];
  routeReason?: string | null;
  /** How `cost` was made (lib/billing/breakdown.ts), shown on the log detail like any request's. */
  priceBreakdown?: StoredBreakdown | null;
}

/** Writes the job's log row (charging `cost`) and settles its reservation. Safe to call again. */
export async function settleJob(charge: JobCharge, lease: JobLease | undefined): Promise<void> {
  const cfg = getConfig();
  // The key's project and maker (docs/decisions/056): their spend and budgets count the job too.
  const key = charge.apiKeyId
    ? await (await getDb()).apiKey.findUnique({ where: { id: charge.apiKeyId }, select: { projectId: true, createdById: true } }).catch(() => null)
    : null;
  await writeLogsNow([
    {
      id: charge.id,
      createdAt: charge.createdAt,
      userId: charge.userId,
      apiKeyId: charge.apiKeyId,
      endpoint: charge.endpoint,
      modelRequested: charge.model,
      modelServed: charge.model,
      channel: charge.channel,
      attempts: charge.attempts ?? [],
      status: charge.status,
      outcome: charge.outcome,
      stream: false,
      promptTokens: 0,
      completionTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      tokensEstimated: false,
      costPico: charge.cost,
      costCnyPico: cnyOf(charge.cost, cfg.cnyRateNano),
      cnyRate: cfg.usdToCny,
      latencyMs: charge.latencyMs,
      firstTokenMs: null,
      errorCode: charge.errorCode,
      routeReason: charge.routeReason ?? null,
      region: charge.region ?? null,
      priceBreakdown: charge.priceBreakdown ?? null,
      projectId: key?.projectId ?? null,
      memberId: key?.createdById ?? null,
    },
  ]);
  if (lease) await release(admissionOf(charge.userId, lease), charge.cost, 0, true);
}
