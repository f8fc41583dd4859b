import { getDb } from '@/lib/db';
import { formatPico, usdToPico } from '@/lib/money';
import { monthOf } from '@/lib/keys/controls';
import { alertEventId } from '@/lib/alerts/signing';
import type { AlertKind, AlertPayload } from '@/lib/alerts/events';

// Finds the thresholds crossed by the accounts that have alert settings and records one event per
// crossing. Every instance runs this; an event's id is a hash of what it is about (account, key,
// budget, period, threshold), so the instances' inserts of one crossing meet on the primary key
// and it is recorded, and delivered, once.

interface NewEvent {
  id: string;
  userId: string;
  kind: AlertKind;
  payload: AlertPayload;
  deliver: boolean;
}

/** Ids this process has already inserted (or seen conflict): skipped without a write next time. */
const known = new Set<string>();
const KNOWN_MAX = 50_000;

/** The thresholds of one budget reached by `spent`: spent >= budget * t / 100, exactly. */
export function crossedThresholds(spent: bigint, budget: bigint, thresholds: readonly number[]): number[] {
  return thresholds.filter((t) => spent * 100n >= budget * BigInt(t));
}

/**
 * Between full sweeps only keys used lately are summed (a lifetime sum reads all of a key's rows):
 * `lastUsedAt` is written within seconds of a request's start, and the margin covers that and the
 * request-log flush. What the margin misses (a stream longer than it, a budget lowered below the
 * spend without new requests) is found by the next full sweep.
 */
const FULL_SWEEP_MS = 5 * 60_000;
const RECENT_MARGIN_MS = 2 * 60_000;
const sweep = { lastFullMs: 0 };

const alertedKey = (keyId: string, kind: string, period: string, threshold: number) => `${keyId}\n${kind}\n${period}\n${threshold}`;

/**
 * Whether a threshold alerted before at spend `alertedSpent` may fire again under `budget`: only when
 * the threshold's amount under it is above that spend, i.e. the spend has crossed it since. Spend only
 * grows within a period, so re-setting a budget below what was spent (any number of times) fires
 * nothing, while raising it re-arms what the new amount puts ahead (#37 item 11).
 */
export function rearmed(alertedSpent: bigint, budget: bigint, threshold: number): boolean {
  return alertedSpent * 100n < budget * BigInt(threshold);
}

/** The highest spend each (key, budget, period, threshold) of these accounts has alerted at. */
async function alertedSpend(userIds: string[]): Promise<Map<string, bigint>> {
  const users = [...new Set(userIds)];
  if (users.length === 0) return new Map();
  const db = await getDb();
  const rows = await db.$queryRaw<{ key_id: string; kind: string; period: string; threshold: number; spent: string }[]>`
    SELECT payload->'data'->'key'->>'id' AS key_id, payload->'data'->>'budget' AS kind, payload->'data'->>'period' AS period,
           (payload->'data'->>'threshold_percent')::int AS threshold, MAX((payload->'data'->>'spent_usd')::numeric)::text AS spent
    FROM "AlertEvent" WHERE kind = 'key.budget.threshold' AND "userId" = ANY(${users}::uuid[])
    GROUP BY 1, 2, 3, 4`;
  return new Map(rows.map((r) => [alertedKey(r.key_id, r.kind, r.period, Number(r.threshold)), usdToPico(r.spent)]));
}

async function keyBudgetEvents(nowMs: number): Promise<NewEvent[]> {
  const db = await getDb();
  const month = monthOf(nowMs);
  const full = nowMs - sweep.lastFullMs >= FULL_SWEEP_MS;
  if (full) sweep.lastFullMs = nowMs;
  const usedSince = new Date(full ? 0 : nowMs - RECENT_MARGIN_MS);
  // One query for every alerting account: its live keys with a budget and their spend (the daily
  // rollup the batch writer keeps, UsageDaily), the month's only when it has a monthly cap.
  const rows = await db.$queryRaw<
    {
      id: string;
      user_id: string;
      name: string;
      prefix: string;
      last_four: string;
      budget: string | null;
      monthly: string | null;
      thresholds: number[];
      webhook: boolean;
      total: string | null;
      month_spent: string | null;
    }[]
  >`
    SELECT k.id::text, k."userId"::text AS user_id, k.name, k.prefix, k."lastFour" AS last_four,
           k."budgetUsd"::text AS budget, k."monthlyBudgetUsd"::text AS monthly, s.thresholds,
           (s."webhookUrl" IS NOT NULL) AS webhook,
           CASE WHEN k."budgetUsd" IS NULL THEN NULL ELSE
             (SELECT COALESCE(SUM(r."costUsd"), 0)::text FROM "UsageDaily" r WHERE r."userId" = k."userId" AND r."apiKeyId" = k.id) END AS total,
           CASE WHEN k."monthlyBudgetUsd" IS NULL THEN NULL ELSE
             (SELECT COALESCE(SUM(r."costUsd"), 0)::text FROM "UsageDaily" r
               WHERE r."userId" = k."userId" AND r."apiKeyId" = k.id AND r."day" >= ${new Date(month.start).toISOString().slice(0, 10)}::date) END AS month_spent
    FROM "AlertSettings" s JOIN "ApiKey" k ON k."userId" = s."userId"
    WHERE k."revokedAt" IS NULL AND (k."budgetUsd" IS NOT NULL OR k."monthlyBudgetUsd" IS NOT NULL)
      AND cardinality(s.thresholds) > 0 AND (${full} OR k."lastUsedAt" >= ${usedSince})`;
  const events: NewEvent[] = [];
  const timestamp = new Date(nowMs).toISOString();
  // Read only for accounts with a threshold reached now: most evaluations find none.
  const reached = (budget: string | null, spent: string | null, thresholds: number[]) =>
    budget !== null && spent !== null && crossedThresholds(usdToPico(spent), usdToPico(budget), thresholds).length > 0;
  const alerted = await alertedSpend(
    rows.filter((r) => reached(r.budget, r.total, r.thresholds) || reached(r.monthly, r.month_spent, r.thresholds)).map((r) => r.user_id),
  );
  for (const r of rows) {
    const budgets = [
      { kind: 'lifetime', period: 'lifetime', budget: r.budget, spent: r.total },
      { kind: 'monthly', period: month.label, budget: r.monthly, spent: r.month_spent },
    ];
    for (const b of budgets) {
      if (b.budget === null || b.spent === null) continue;
      const budget = usdToPico(b.budget);
      const spent = usdToPico(b.spent);
      for (const t of crossedThresholds(spent, budget, r.thresholds)) {
        // A crossing is news only when the spend has grown past the threshold since its last alert:
        // raising a budget re-arms its thresholds, setting it below what was spent does not.
        const before = alerted.get(alertedKey(r.id, b.kind, b.period, t));
        if (before !== undefined && !rearmed(before, budget, t)) continue;
        // The budget's amount is part of the id (one event per crossing, whichever instance finds it).
        const id = alertEventId([r.user_id, 'key', r.id, b.kind, b.period, formatPico(budget), t]);
        if (known.has(id)) continue;
        events.push({
          id,
          userId: r.user_id,
          kind: 'key.budget.threshold',
          deliver: r.webhook,
          payload: {
            id,
            type: 'key.budget.threshold',
            timestamp,
            data: {
              account_id: r.user_id,
              key: { id: r.id, name: r.name, display: `${r.prefix}…${r.last_four}` },
              budget: b.kind,
              period: b.period,
              threshold_percent: t,
              budget_usd: formatPico(budget),
              spent_usd: formatPico(spent),
            },
          },
        });
      }
    }
  }
  return events;
}

/**
 * Low balance fires once per episode: the episode number moves on (atomically, once across
 * instances) when the balance is seen back at or above the threshold, so the next fall fires again.
 */
async function lowBalanceEvents(nowMs: number): Promise<NewEvent[]> {
  const db = await getDb();
  const rows = await db.$queryRaw<{ user_id: string; balance: string; threshold: string; episode: number; fired: boolean; webhook: boolean }[]>`
    SELECT s."userId"::text AS user_id, u."balanceUsd"::text AS balance, s."lowBalanceUsd"::text AS threshold,
           s."lowBalanceEpisode" AS episode, s."lowBalanceFired" AS fired, (s."webhookUrl" IS NOT NULL) AS webhook
    FROM "AlertSettings" s JOIN "User" u ON u.id = s."userId"
    WHERE s."lowBalanceUsd" IS NOT NULL`;
  const events: NewEvent[] = [];
  for (const r of rows) {
    const balance = usdToPico(r.balance);
    const threshold = usdToPico(r.threshold);
    if (balance >= threshold) {
      if (r.fired) {
        await db.$executeRaw`UPDATE "AlertSettings" SET "lowBalanceFired" = false, "lowBalanceEpisode" = "lowBalanceEpisode" + 1
          WHERE "userId" = ${r.user_id}::uuid AND "lowBalanceEpisode" = ${r.episode} AND "lowBalanceFired"`;
      }
      continue;
    }
    const id = alertEventId([r.user_id, 'low_balance', formatPico(threshold), r.episode]);
    if (!r.fired) {
      await db.$executeRaw`UPDATE "AlertSettings" SET "lowBalanceFired" = true WHERE "userId" = ${r.user_id}::uuid AND "lowBalanceEpisode" = ${r.episode}`;
    }
    if (known.has(id)) continue;
    events.push({
      id,
      userId: r.user_id,
      kind: 'account.balance.low',
      deliver: r.webhook,
      payload: {
        id,
        type: 'account.balance.low',
        timestamp: new Date(nowMs).toISOString(),
        data: { account_id: r.user_id, balance_usd: formatPico(balance), threshold_usd: formatPico(threshold) },
      },
    });
  }
  return events;
}

/** The highest spend each (project or member, month, threshold) of these accounts has alerted at. */
async function alertedGroupSpend(userIds: string[]): Promise<Map<string, bigint>> {
  const users = [...new Set(userIds)];
  if (users.length === 0) return new Map();
  const db = await getDb();
  const rows = await db.$queryRaw<{ subject: string; kind: string; period: string; threshold: number; spent: string }[]>`
    SELECT COALESCE(payload->'data'->'project'->>'id', payload->'data'->'member'->>'id') AS subject, kind,
           payload->'data'->>'period' AS period, (payload->'data'->>'threshold_percent')::int AS threshold,
           MAX((payload->'data'->>'spent_usd')::numeric)::text AS spent
    FROM "AlertEvent" WHERE kind IN ('project.budget.threshold', 'member.budget.threshold') AND "userId" = ANY(${users}::uuid[])
    GROUP BY 1, 2, 3, 4`;
  return new Map(rows.map((r) => [alertedKey(r.subject, r.kind, r.period, Number(r.threshold)), usdToPico(r.spent)]));
}

/**
 * Monthly budgets of projects and organization members (docs/decisions/056), against the account's
 * thresholds. A project's spend is its rollup (UsageDailyProject); a member's is the spend of the
 * keys they made (UsageDaily by key), what their budget counter loads from. Both are bounded to the
 * month, so every evaluation reads them: no lastUsedAt narrows a project or a member.
 */
async function groupBudgetEvents(nowMs: number): Promise<NewEvent[]> {
  const db = await getDb();
  const month = monthOf(nowMs);
  const monthStart = new Date(month.start).toISOString().slice(0, 10);
  const rows = await db.$queryRaw<
    { kind: 'project' | 'member'; id: string; user_id: string; name: string; budget: string; thresholds: number[]; webhook: boolean; spent: string }[]
  >`
    SELECT 'project' AS kind, p.id::text, p."userId"::text AS user_id, p.name, p."monthlyBudgetUsd"::text AS budget, s.thresholds,
           (s."webhookUrl" IS NOT NULL) AS webhook,
           (SELECT COALESCE(SUM(r."costUsd"), 0)::text FROM "UsageDailyProject" r
             WHERE r."userId" = p."userId" AND r."projectId" = p.id AND r.day >= ${monthStart}::date) AS spent
    FROM "AlertSettings" s JOIN "Project" p ON p."userId" = s."userId"
    WHERE p."monthlyBudgetUsd" IS NOT NULL AND cardinality(s.thresholds) > 0
    UNION ALL
    SELECT 'member' AS kind, m."userId"::text, m."orgId"::text AS user_id, u.email, m."monthlyBudgetUsd"::text AS budget, s.thresholds,
           (s."webhookUrl" IS NOT NULL) AS webhook,
           (SELECT COALESCE(SUM(r."costUsd"), 0)::text FROM "UsageDaily" r
             WHERE r."userId" = m."orgId" AND r.day >= ${monthStart}::date
               AND (r."apiKeyId" IN (SELECT k.id FROM "ApiKey" k WHERE k."userId" = m."orgId" AND k."createdById" = m."userId"))) AS spent
    FROM "AlertSettings" s JOIN "Membership" m ON m."orgId" = s."userId" JOIN "User" u ON u.id = m."userId"
    WHERE m."monthlyBudgetUsd" IS NOT NULL AND cardinality(s.thresholds) > 0`;
  const events: NewEvent[] = [];
  const timestamp = new Date(nowMs).toISOString();
  const alerted = await alertedGroupSpend(
    rows.filter((r) => crossedThresholds(usdToPico(r.spent), usdToPico(r.budget), r.thresholds).length > 0).map((r) => r.user_id),
  );
  for (const r of rows) {
    const budget = usdToPico(r.budget);
    const spent = usdToPico(r.spent);
    const kind: AlertKind = r.kind === 'project' ? 'project.budget.threshold' : 'member.budget.threshold';
    for (const t of crossedThresholds(spent, budget, r.thresholds)) {
      // The same re-arming rule as a key's budget: a budget set below the spend fires nothing.
      const before = alerted.get(alertedKey(r.id, kind, month.label, t));
      if (before !== undefined && !rearmed(before, budget, t)) continue;
      const id = alertEventId([r.user_id, r.kind, r.id, 'monthly', month.label, formatPico(budget), t]);
      if (known.has(id)) continue;
      const subject: Record<string, Record<string, string>> = r.kind === 'project'
        ? { project: { id: r.id, name: r.name } }
        : { member: { id: r.id, email: r.name } };
      events.push({
        id,
        userId: r.user_id,
        kind,
        deliver: r.webhook,
        payload: {
          id,
          type: kind,
          timestamp,
          data: {
            account_id: r.user_id,
            ...subject,
            budget: 'monthly',
            period: month.label,
            threshold_percent: t,
            budget_usd: formatPico(budget),
            spent_usd: formatPico(spent),
          },
        },
      });
    }
  }
  return events;
}

/** One evaluation: records the new crossings (each once across instances); returns how many were new here. */
export async function evaluateAlerts(nowMs = Date.now()): Promise<number> {
  const events = [...(await keyBudgetEvents(nowMs)), ...(await groupBudgetEvents(nowMs)), ...(await lowBalanceEvents(nowMs))];
  if (events.length === 0) return 0;
  const db = await getDb();
  const now = new Date(nowMs);
  let inserted = 0;
  for (const e of events) {
    // Events fired while no webhook is set are shown in the dashboard only (nextAttemptAt null).
    const n = await db.$executeRaw`
      INSERT INTO "AlertEvent" (id, "userId", kind, payload, "createdAt", "nextAttemptAt")
      VALUES (${e.id}, ${e.userId}::uuid, ${e.kind}, ${JSON.stringify(e.payload)}::jsonb, ${now}, ${e.deliver ? now : null})
      ON CONFLICT (id) DO NOTHING`;
    inserted += n;
    if (known.size >= KNOWN_MAX) known.clear();
    known.add(e.id);
  }
  return inserted;
}
