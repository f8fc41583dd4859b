// A monthly statement of one account (a person's or an organization's wallet; docs/decisions/046):
// every figure is a sum of that account's ledger entries in the month, in exact pico-USD, so
// opening + credits - debits = closing holds by construction, and closing is checked against the
// ledger's own balance after its last entry of the month (`reconciled`).
// Months are UTC months: a statement is an accounting document that reads the same for every
// member of an organization, the operator and an accountant, wherever they are, and the usage rollup
// (UsageDaily) and the billing history are kept per UTC day.
import { Prisma } from '@/lib/generated/prisma/client';
import { getDb, isUuid } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { usdToCny, usdToPico } from '@/lib/money';

/** How a ledger entry reads on a statement. Kinds this code does not know are shown under their own name. */
export type StatementCategory = 'recharge' | 'code' | 'plan' | 'refund' | 'usage' | 'adjustment' | `kind:${string}`;

/** The order of a statement's summary; unknown kinds follow, by name. */
export const CATEGORY_ORDER: readonly StatementCategory[] = ['recharge', 'code', 'plan', 'refund', 'usage', 'adjustment'];

export interface StatementMonth {
  /** `YYYY-MM` */
  month: string;
  /** First instant of the month (UTC), inclusive. */
  from: Date;
  /** First instant of the next month (UTC), exclusive. */
  to: Date;
}

export interface StatementLine {
  category: StatementCategory;
  /** The ledger kind behind it (`recharge` for both Stripe payments and codes). */
  kind: string;
  entries: number;
  /** Sum of the positive entries, pico-USD. */
  creditsUsd: bigint;
  /** Sum of the negative entries as a positive figure, pico-USD. */
  debitsUsd: bigint;
  /** creditsUsd - debitsUsd. */
  amountUsd: bigint;
}

export interface StatementTransaction {
  id: string;
  at: Date;
  kind: string;
  category: StatementCategory;
  amountUsd: bigint;
  balanceAfterUsd: bigint;
  reference: string | null;
  note: string | null;
  /** A Stripe recharge's Payment id: its receipt is /api/receipts/{paymentId}.pdf. */
  paymentId: string | null;
  /** A plan charge's Stripe invoice page, when the charge names one. */
  hostedInvoiceUrl: string | null;
}

export interface StatementModelUsage {
  /** The model that served (else the one asked for); '' when the request's log row is missing. */
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** What the model's requests took from the balance, as a positive figure, pico-USD. */
  debitsUsd: bigint;
}

export interface StatementInvoice {
  planId: string;
  status: string;
  hostedInvoiceUrl: string;
}

export interface Statement extends StatementMonth {
  accountId: string;
  /** The account's email, or the organization's name for an organization. */
  accountName: string;
  isOrganization: boolean;
  /** The month is the current one: figures are to `generatedAt`. */
  partial: boolean;
  generatedAt: Date;
  /** The configured USD→CNY rate, as text ("7.2"), and in 1e-9 units. */
  cnyRate: string;
  cnyRateNano: bigint;
  openingUsd: bigint;
  creditsUsd: bigint;
  debitsUsd: bigint;
  /** openingUsd + creditsUsd - debitsUsd. */
  closingUsd: bigint;
  /** The ledger's balance after its last entry of the month (the opening when there is none). */
  ledgerClosingUsd: bigint;
  /** closingUsd === ledgerClosingUsd. */
  reconciled: boolean;
  lines: StatementLine[];
  transactions: StatementTransaction[];
  usageByModel: StatementModelUsage[];
  /** The account's plans with a Stripe invoice page (issue 42): linked beside the plan charges. */
  invoices: StatementInvoice[];
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** `YYYY-MM` as a UTC month; 400 (statement.month_invalid) for anything else, or a month not begun yet. */
export function parseStatementMonth(value: string | null | undefined, now = new Date()): StatementMonth {
  const m = MONTH.exec(value ?? '');
  const year = m ? Number(m[1]) : 0;
  if (!m || year < 2000 || year > 9998) throw codedError('invalid_request', 'statement.month_invalid', undefined, { param: 'month' });
  const from = new Date(Date.UTC(year, Number(m[2]) - 1, 1));
  if (from.getTime() > now.getTime()) throw codedError('invalid_request', 'statement.month_future', { month: value! }, { param: 'month' });
  return { month: value!, from, to: new Date(Date.UTC(year, Number(m[2]), 1)) };
}

/** The UTC month `back` months before `now`'s (0: the current one). */
export function monthBefore(now: Date, back: number): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The last `n` UTC months, newest first. */
export function recentMonths(now: Date, n = 12): string[] {
  return Array.from({ length: n }, (_, i) => monthBefore(now, i));
}

export function categoryOf(kind: string, reference: string | null): StatementCategory {
  switch (kind) {
    case 'recharge':
      return reference?.startsWith('redeem:') ? 'code' : 'recharge';
    case 'subscription':
      return 'plan';
    case 'refund':
      return 'refund';
    case 'usage':
      return 'usage';
    case 'admin_credit':
      return 'adjustment';
    default:
      return `kind:${kind}`;
  }
}

const uuidLike = (s: string | null): s is string => s !== null && isUuid(s);
const httpsUrl = (s: string | null): string | null => (s && /^https:\/\/\S+$/.test(s) ? s : null);
const iso = (d: Date) => d.toISOString();

interface BoundsRow {
  before_start: string | null;
  first_opening: string | null;
  before_end: string | null;
  balance: string;
  email: string;
  org_name: string | null;
}

/** The statement of `accountId` for a month; 404 (statement.account_not_found) when there is no such account. */
export async function buildStatement(accountId: string, month: StatementMonth, now = new Date()): Promise<Statement> {
  if (!isUuid(accountId)) throw codedError('not_found', 'statement.account_not_found');
  const db = await getDb();
  const uid = Prisma.sql`CAST(${accountId} AS uuid)`;
  const from = Prisma.sql`CAST(${iso(month.from)} AS timestamp)`;
  const to = Prisma.sql`CAST(${iso(month.to)} AS timestamp)`;

  // The balance at the month's edges as the ledger has it: after the last entry before each edge;
  // before any entry, the balance the first one started from (or the account's, if it never moved).
  const bounds = await db.$queryRaw<BoundsRow[]>`
    SELECT
      (SELECT "balanceAfterUsd"::text FROM "LedgerEntry" WHERE "userId" = ${uid} AND "createdAt" < ${from} ORDER BY "createdAt" DESC, id DESC LIMIT 1) AS before_start,
      (SELECT ("balanceAfterUsd" - "amountUsd")::text FROM "LedgerEntry" WHERE "userId" = ${uid} ORDER BY "createdAt", id LIMIT 1) AS first_opening,
      (SELECT "balanceAfterUsd"::text FROM "LedgerEntry" WHERE "userId" = ${uid} AND "createdAt" < ${to} ORDER BY "createdAt" DESC, id DESC LIMIT 1) AS before_end,
      u."balanceUsd"::text AS balance, u.email, o.name AS org_name
    FROM "User" u LEFT JOIN "Organization" o ON o.id = u.id
    WHERE u.id = ${uid}`;
  const edge = bounds[0];
  if (!edge) throw codedError('not_found', 'statement.account_not_found');

  const [entries, usage, subscriptions] = await Promise.all([
    db.$queryRaw<{ id: string; at: Date; kind: string; amount: string; balance_after: string; reference: string | null; note: string | null }[]>`
      SELECT id::text, "createdAt" AS at, kind::text, "amountUsd"::text AS amount, "balanceAfterUsd"::text AS balance_after, reference, note
      FROM "LedgerEntry"
      WHERE "userId" = ${uid} AND "createdAt" >= ${from} AND "createdAt" < ${to} AND kind <> 'usage'
      ORDER BY "createdAt", id`,
    // Usage by model: the month's usage entries, each joined to its request's log row (the entry's
    // reference is the request id and its createdAt the request's, the log's key; the month bounds
    // let PostgreSQL read only the month's log partitions). An entry whose row is missing is kept.
    db.$queryRaw<{ model: string; requests: bigint; prompt: bigint | null; completion: bigint | null; debits: string }[]>`
      SELECT COALESCE(r."modelServed", r."modelRequested", '') AS model, count(*) AS requests,
             sum(r."promptTokens") AS prompt, sum(r."completionTokens") AS completion, (-sum(l."amountUsd"))::text AS debits
      FROM "LedgerEntry" l
      LEFT JOIN "RequestLog" r ON r.id = l.reference AND r."createdAt" = l."createdAt" AND r."userId" = l."userId"
                             AND r."createdAt" >= ${from} AND r."createdAt" < ${to}
      WHERE l."userId" = ${uid} AND l.kind = 'usage' AND l."createdAt" >= ${from} AND l."createdAt" < ${to}
      GROUP BY 1
      ORDER BY sum(l."amountUsd"), 1`,
    db.subscription.findMany({
      where: { userId: accountId, latestInvoiceUrl: { not: null } },
      select: { planId: true, status: true, latestInvoiceUrl: true },
      orderBy: { createdAt: 'asc' },
    }),
  ]);

  const transactions: StatementTransaction[] = entries.map((e) => {
    const category = categoryOf(e.kind, e.reference);
    return {
      id: e.id,
      at: new Date(e.at),
      kind: e.kind,
      category,
      amountUsd: usdToPico(e.amount),
      balanceAfterUsd: usdToPico(e.balance_after),
      reference: e.reference,
      note: e.note,
      paymentId: category === 'recharge' && uuidLike(e.reference) ? e.reference : null,
      hostedInvoiceUrl: category === 'plan' ? httpsUrl(e.reference) : null,
    };
  });
  const usageByModel: StatementModelUsage[] = usage.map((u) => ({
    model: u.model,
    requests: Number(u.requests),
    promptTokens: Number(u.prompt ?? 0),
    completionTokens: Number(u.completion ?? 0),
    debitsUsd: usdToPico(u.debits),
  }));

  const lines = new Map<StatementCategory, StatementLine>();
  const add = (category: StatementCategory, kind: string, entriesCount: number, credits: bigint, debits: bigint) => {
    const line = lines.get(category) ?? { category, kind, entries: 0, creditsUsd: 0n, debitsUsd: 0n, amountUsd: 0n };
    line.entries += entriesCount;
    line.creditsUsd += credits;
    line.debitsUsd += debits;
    line.amountUsd = line.creditsUsd - line.debitsUsd;
    lines.set(category, line);
  };
  for (const t of transactions) add(t.category, t.kind, 1, t.amountUsd > 0n ? t.amountUsd : 0n, t.amountUsd < 0n ? -t.amountUsd : 0n);
  // Usage entries are debits (the writer charges only positive costs); a credit there would be netted.
  for (const u of usageByModel) add('usage', 'usage', u.requests, u.debitsUsd < 0n ? -u.debitsUsd : 0n, u.debitsUsd > 0n ? u.debitsUsd : 0n);

  const ordered = [...lines.values()].sort((a, b) => rank(a.category) - rank(b.category) || a.category.localeCompare(b.category));
  const creditsUsd = ordered.reduce((s, l) => s + l.creditsUsd, 0n);
  const debitsUsd = ordered.reduce((s, l) => s + l.debitsUsd, 0n);
  const openingUsd = usdToPico(edge.before_start ?? edge.first_opening ?? edge.balance);
  const closingUsd = openingUsd + creditsUsd - debitsUsd;
  const ledgerClosingUsd = edge.before_end !== null ? usdToPico(edge.before_end) : openingUsd;
  const config = getConfig();

  return {
    ...month,
    accountId,
    accountName: edge.org_name ?? edge.email,
    isOrganization: edge.org_name !== null,
    partial: now.getTime() < month.to.getTime(),
    generatedAt: now,
    cnyRate: config.usdToCny,
    cnyRateNano: config.cnyRateNano,
    openingUsd,
    creditsUsd,
    debitsUsd,
    closingUsd,
    ledgerClosingUsd,
    reconciled: closingUsd === ledgerClosingUsd,
    lines: ordered,
    transactions,
    usageByModel,
    invoices: subscriptions.map((s) => ({ planId: s.planId, status: s.status, hostedInvoiceUrl: s.latestInvoiceUrl! })),
  };
}

function rank(category: StatementCategory): number {
  const i = CATEGORY_ORDER.indexOf(category);
  return i === -1 ? CATEGORY_ORDER.length : i;
}

/**
 * A pico-USD figure of a statement in CNY at its rate (each figure converted on its own), rounded
 * half away from zero: a debit reads as the negative of the same credit (usdToCny's integer division
 * would round a negative half toward zero).
 */
export const statementCny = (s: Pick<Statement, 'cnyRateNano'>, usd: bigint): bigint =>
  usd < 0n ? -usdToCny(-usd, s.cnyRateNano) : usdToCny(usd, s.cnyRateNano);
