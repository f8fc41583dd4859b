// Monthly statements (issue 42 item 5) against the built server. A month is generated for one
// account through the real paths -- a Stripe recharge (signed webhook), a redemption code (the API),
// usage through the log writer, a refund and an operator adjustment through the ledger -- each entry
// then dated into last month, in order, so the ledger's balance-after chain stays the one written.
// Entries before and after the month (and on both edges of it) check the bounds. The statement must
// reconcile with the ledger to the pico-dollar, the CSV and the PDF must carry the page's totals.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, signIn, type TestAccount } from '../support/accounts';
import { logRecord } from '../support/log-record';
import { parsePdf } from '../support/pdf';
import { creditBalance } from '@/lib/billing/ledger';
import { writeLogsNow } from '@/lib/billing/writer';
import { createCodeBatch } from '@/lib/admin/redemption';
import { formatMoney } from '@/lib/format';
import { getDb } from '@/lib/db';
import { parseCsv } from '@/lib/admin/reconcile';

const WEBHOOK_SECRET = 'whsec_statements_suite';
const PICO = 1_000_000_000_000n;

let gw: RunningGateway;
let fake: FakeUpstream;
let db: Awaited<ReturnType<typeof getDb>>;
let owner: TestAccount & { cookie: string };
let other: TestAccount & { cookie: string };

/** Last UTC month, as the test generates it. */
const now = new Date();
const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
const MONTH = `${from.getUTCFullYear()}-${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
const day = (d: number, h = 12) => new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), d, h));

/** Exact decimal text of a pico amount (independent of lib/money). */
function dec(p: bigint): string {
  const neg = p < 0n;
  const abs = neg ? -p : p;
  const frac = (abs % PICO).toString().padStart(12, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / PICO}${frac ? `.${frac}` : ''}`;
}
const picoOf = (text: string): bigint => {
  const [w, f = ''] = text.replace('-', '').split('.');
  const v = BigInt(w!) * PICO + BigInt(f.padEnd(12, '0'));
  return text.startsWith('-') ? -v : v;
};
/** CNY at 7.2, rounded half up at the pico (a positive amount). */
const cny72 = (usd: bigint) => (usd * 72n + 5n) / 10n;

const api = (cookie: string, path: string, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, { headers: { cookie, ...headers } });

/** Dates the account's newest ledger entry (the one just written) at `at`. */
async function dateLastEntry(userId: string, at: Date) {
  await db.$executeRaw`UPDATE "LedgerEntry" SET "createdAt" = CAST(${at.toISOString()} AS timestamp)
    WHERE id = (SELECT max(id) FROM "LedgerEntry" WHERE "userId" = CAST(${userId} AS uuid))`;
}

const INVOICE = 'https://invoice.stripe.com/i/acct_test/statements';
const expected = { opening: 0n, recharge: 0n, code: 0n, refund: 0n, adjustment: 0n, plan: 0n, usage: new Map<string, { requests: number; debits: bigint }>() };
let paymentId = '';

async function usage(userId: string, at: Date, model: string, costPico: bigint, count = true) {
  await writeLogsNow([logRecord(userId, { createdAt: at, modelServed: model, modelRequested: model, costPico, costCnyPico: cny72(costPico) })]);
  if (!count) return;
  const u = expected.usage.get(model) ?? { requests: 0, debits: 0n };
  expected.usage.set(model, { requests: u.requests + 1, debits: u.debits + costPico });
}

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } });
  db = await getDb();
  const a = await createAccount({ tier: 'pro', balanceUsd: '20.000000000003' });
  owner = { ...a, cookie: await signIn(gw.url, a, '10.42.5.1') };
  const b = await createAccount({ tier: 'free' });
  other = { ...b, cookie: await signIn(gw.url, b, '10.42.5.2') };
  const uid = owner.userId;

  // Before the month: the opening balance.
  expected.opening = 20_000_000_000_003n;
  await dateLastEntry(uid, new Date(from.getTime() - 16 * 86_400_000));

  // The month's first instant: a Stripe recharge of $10 through the signed webhook.
  const payload = JSON.stringify({
    id: `evt_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'checkout.session.completed',
    data: {
      object: {
        id: `cs_test_${randomUUID().replace(/-/g, '')}`,
        object: 'checkout.session',
        mode: 'payment',
        amount_total: 1000,
        currency: 'usd',
        payment_status: 'paid',
        status: 'complete',
        client_reference_id: uid,
        metadata: { userId: uid },
      },
    },
  });
  const hook = await fetch(`${gw.url}/api/payment/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) },
    body: payload,
  });
  expect(hook.status, await hook.clone().text()).toBe(200);
  const payment = await db.payment.findFirstOrThrow({ where: { userId: uid, status: 'paid' } });
  paymentId = payment.id;
  expected.recharge = 10n * PICO;
  await dateLastEntry(uid, from);
  await db.payment.update({ where: { id: paymentId }, data: { paidAt: from } });

  await usage(uid, day(2, 9), 'gpt-4o-mini', 1_234_567_891n);
  await usage(uid, day(2, 10), 'deepseek-chat', 987_654_321_017n);

  // A redemption code through the account API.
  const batch = await createCodeBatch({ id: null, label: 'test' }, { amountPico: 2_500_000_000_000n, count: 1 });
  const redeemed = await fetch(`${gw.url}/api/payment/redeem`, {
    method: 'POST',
    headers: { cookie: owner.cookie, origin: gw.url, 'content-type': 'application/json', 'x-forwarded-for': '10.42.5.1' },
    body: JSON.stringify({ code: batch.codes[0]!.code }),
  });
  expect(redeemed.status, await redeemed.clone().text()).toBe(200);
  expected.code = 2_500_000_000_000n;
  await dateLastEntry(uid, day(3));

  await usage(uid, day(5), 'gpt-4o-mini', 3_000_000_000_001n);
  await usage(uid, day(6), 'gpt-4o-mini', 0n, false); // a failed request: logged, never charged

  await creditBalance(uid, 'refund', 500_000_000_001n, { note: 'refund of a failed batch' });
  expected.refund = 500_000_000_001n;
  await dateLastEntry(uid, day(10));

  await creditBalance(uid, 'admin_credit', -1_250_000_000_000n, { note: 'correction' });
  expected.adjustment = -1_250_000_000_000n;
  await dateLastEntry(uid, day(12));

  // A plan charge as the plans code records one (ledger kind `subscription`, its Stripe invoice page as reference).
  await db.$transaction(async (tx) => {
    const user = await tx.user.update({ where: { id: uid }, data: { balanceUsd: { decrement: '9.99' } } });
    await tx.ledgerEntry.create({
      data: { userId: uid, kind: 'subscription', amountUsd: '-9.99', balanceAfterUsd: user.balanceUsd, reference: INVOICE, note: 'plan pro' },
    });
  });
  expected.plan = -9_990_000_000_000n;
  await dateLastEntry(uid, day(15));

  await usage(uid, day(20), 'deepseek-chat', 12_345n);
  await usage(uid, new Date(to.getTime() - 1), 'gpt-4o-mini', 7_000_000n); // the month's last millisecond

  // After the month: left out.
  await usage(uid, to, 'gpt-4o-mini', 5_000_000_000n, false);
  await creditBalance(uid, 'admin_credit', 3n * PICO, { note: 'this month' });
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await db?.$disconnect();
});

const usageDebits = () => [...expected.usage.values()].reduce((s, u) => s + u.debits, 0n);
const credits = () => expected.recharge + expected.code + expected.refund;
const debits = () => usageDebits() - expected.adjustment - expected.plan;
const closing = () => expected.opening + credits() - debits();

interface Money {
  usd: string;
  cny: string;
}
interface StatementJson {
  month: string;
  time_zone: string;
  partial: boolean;
  opening_balance: Money;
  total_credits: Money;
  total_debits: Money;
  closing_balance: Money;
  ledger_balance: Money;
  reconciled: boolean;
  lines: { category: string; entries: number; amount: Money }[];
  transactions: { category: string; amount: Money; payment_id: string | null; hosted_invoice_url: string | null }[];
  usage_by_model: { model: string; requests: number; amount: Money }[];
}

describe('monthly statements', { timeout: 60_000 }, () => {
  it('reconciles a generated month with the ledger to the pico-dollar: opening + credits - debits = closing = balance after its last entry', async () => {
    const res = await api(owner.cookie, `/api/statements/${MONTH}.json`);
    expect(res.status, await res.clone().text()).toBe(200);
    const s = (await res.json()) as StatementJson;

    // The ledger itself, read directly: the balance after the month's last entry, and the sum of every amount before the month ends.
    const [last] = await db.$queryRaw<{ balance: string; total: string }[]>`
      SELECT (SELECT "balanceAfterUsd"::text FROM "LedgerEntry" WHERE "userId" = CAST(${owner.userId} AS uuid) AND "createdAt" < CAST(${to.toISOString()} AS timestamp)
              ORDER BY "createdAt" DESC, id DESC LIMIT 1) AS balance,
             (SELECT sum("amountUsd")::text FROM "LedgerEntry" WHERE "userId" = CAST(${owner.userId} AS uuid) AND "createdAt" < CAST(${to.toISOString()} AS timestamp)) AS total`;
    expect(picoOf(last!.balance)).toBe(closing());
    expect(picoOf(last!.total)).toBe(closing());

    expect(s).toMatchObject({ month: MONTH, time_zone: 'UTC', partial: false, reconciled: true });
    expect(s.opening_balance.usd).toBe(dec(expected.opening));
    expect(s.total_credits.usd).toBe(dec(credits()));
    expect(s.total_debits.usd).toBe(dec(debits()));
    expect(s.closing_balance.usd).toBe(dec(closing()));
    expect(s.ledger_balance.usd).toBe(dec(closing()));
    expect(picoOf(s.opening_balance.usd) + picoOf(s.total_credits.usd) - picoOf(s.total_debits.usd)).toBe(picoOf(s.closing_balance.usd));
    expect(s.closing_balance.cny).toBe(dec(cny72(closing())));

    const line = (c: string) => s.lines.find((l) => l.category === c);
    expect(line('recharge')).toMatchObject({ entries: 1, amount: { usd: dec(expected.recharge) } });
    expect(line('code')).toMatchObject({ entries: 1, amount: { usd: dec(expected.code) } });
    expect(line('refund')).toMatchObject({ entries: 1, amount: { usd: dec(expected.refund) } });
    expect(line('adjustment')).toMatchObject({ entries: 1, amount: { usd: dec(expected.adjustment) } });
    expect(line('usage')).toMatchObject({ entries: 5, amount: { usd: dec(-usageDebits()) } });
    expect(line('plan')).toMatchObject({ entries: 1, amount: { usd: dec(expected.plan) } });
    expect(s.transactions.find((t) => t.category === 'plan')?.hosted_invoice_url).toBe(INVOICE);
    expect(s.transactions.find((t) => t.category === 'recharge')?.payment_id).toBe(paymentId);
    for (const [model, u] of expected.usage) {
      expect(s.usage_by_model.find((m) => m.model === model)).toMatchObject({ requests: u.requests, amount: { usd: dec(-u.debits) } });
    }
    expect(s.usage_by_model).toHaveLength(expected.usage.size);
  });

  it('the CSV carries the same totals as the page, and its rows add up to them', async () => {
    const csv = await api(owner.cookie, `/api/statements/${MONTH}.csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.headers.get('content-disposition')).toContain(`statement-${MONTH}.csv`);
    const rows = parseCsv(await csv.text());
    expect(rows[0]).toEqual([
      'section',
      'date',
      'category',
      'description',
      'requests',
      'amount_usd',
      'amount_cny',
      'balance_after_usd',
      'reference',
      'hosted_invoice_url',
    ]);
    const summary = (key: string) => picoOf(rows.find((r) => r[0] === 'summary' && r[2] === key)![5]!);
    expect(summary('opening_balance')).toBe(expected.opening);
    expect(summary('closing_balance')).toBe(closing());
    expect(summary('ledger_balance')).toBe(closing());
    const categories = rows.filter((r) => r[0] === 'summary' && ['recharge', 'code', 'plan', 'refund', 'usage', 'adjustment'].includes(r[2]!));
    expect(categories).toHaveLength(6);
    expect(rows.find((r) => r[0] === 'transaction' && r[2] === 'plan')?.[9]).toBe(INVOICE);
    expect(expected.opening + categories.reduce((s, r) => s + picoOf(r[5]!), 0n)).toBe(closing());
    const detail = rows.filter((r) => r[0] === 'transaction' || r[0] === 'usage').reduce((s, r) => s + picoOf(r[5]!), 0n);
    expect(expected.opening + detail).toBe(closing());

    const page = await api(owner.cookie, `/dashboard/billing/statements?month=${MONTH}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const shown = (id: string) => new RegExp(`data-testid="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
    expect(shown('statement-closing')).toBe(formatMoney(summary('closing_balance')));
    expect(shown('statement-opening')).toBe(formatMoney(summary('opening_balance')));
    expect(shown('statement-line-usage')).toBe(formatMoney(picoOf(categories.find((r) => r[2] === 'usage')![5]!)));
    expect(html).toContain('data-reconciled="true"');
    expect(html).toContain(`/api/receipts/${paymentId}.pdf`);

    // The billing history lists the plan charge, and links the recharge's receipt.
    const billing = await api(owner.cookie, '/dashboard/billing');
    expect(billing.status).toBe(200);
    const history = await billing.text();
    expect(history).toContain('Plan charge');
    expect(history).toContain(`/api/receipts/${paymentId}.pdf`);
    expect(history).toContain('href="/dashboard/billing/statements"');
  });

  it('the PDF is a valid PDF that shows the totals', async () => {
    const res = await api(owner.cookie, `/api/statements/${MONTH}.pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const buf = Buffer.from(await res.arrayBuffer());
    expect(buf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pdf = parsePdf(buf);
    expect(pdf.pages).toBeGreaterThanOrEqual(1);
    const text = pdf.text.join('\n');
    expect(text).toContain('Closing balance');
    expect(text).toContain(formatMoney(closing()));
    expect(text).toContain(formatMoney(expected.opening));
    expect(text).toContain(formatMoney(cny72(closing()), 'CNY'));
    expect(text).toContain(formatMoney(-usageDebits()));
  });

  it('a recharge has a receipt, for its own account only', async () => {
    const res = await api(owner.cookie, `/api/receipts/${paymentId}.pdf`);
    expect(res.status).toBe(200);
    const text = parsePdf(Buffer.from(await res.arrayBuffer())).text.join('\n');
    expect(text).toContain(paymentId);
    expect(text).toContain('$10.00');
    expect(text).toContain(formatMoney(72n * PICO, 'CNY'));

    const stranger = await api(other.cookie, `/api/receipts/${paymentId}.pdf`);
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { error: { message_code: string } }).error.message_code).toBe('receipt.not_found');
  });

  it('bad months are 400 with a message code, never a 500', async () => {
    const future = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const futureMonth = `${future.getUTCFullYear()}-${String(future.getUTCMonth() + 1).padStart(2, '0')}`;
    for (const [file, code] of [
      ['2026-13.csv', 'statement.month_invalid'],
      ['november.pdf', 'statement.format_invalid'],
      [`${MONTH}.xlsx`, 'statement.format_invalid'],
      [`${futureMonth}.csv`, 'statement.month_future'],
    ]) {
      const res = await api(owner.cookie, `/api/statements/${file}`);
      expect(res.status, file).toBe(400);
      expect(((await res.json()) as { error: { message_code: string } }).error.message_code).toBe(code);
    }
    expect((await fetch(`${gw.url}/api/statements/${MONTH}.csv`)).status).toBe(401);
  });

  it("an organization's statement is readable by its billing role, not by a developer; an operator reads any account's", async () => {
    const created = await fetch(`${gw.url}/api/orgs`, {
      method: 'POST',
      headers: { cookie: owner.cookie, origin: gw.url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Statements Inc' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const org = (await created.json()) as { id: string };
    const billing = await createAccount({});
    const developer = await createAccount({});
    await db.membership.createMany({
      data: [
        { orgId: org.id, userId: billing.userId, role: 'billing' },
        { orgId: org.id, userId: developer.userId, role: 'developer' },
      ],
    });
    const inOrg = { 'x-organization-id': org.id };
    const asBilling = await api(await signIn(gw.url, billing, '10.42.5.3'), `/api/statements/${MONTH}.json`, inOrg);
    expect(asBilling.status).toBe(200);
    expect(await asBilling.json()).toMatchObject({ account_id: org.id, account_name: 'Statements Inc', opening_balance: { usd: '0' } });
    const asDeveloper = await api(await signIn(gw.url, developer, '10.42.5.4'), `/api/statements/${MONTH}.csv`, inOrg);
    expect(asDeveloper.status).toBe(403);
    expect(((await asDeveloper.json()) as { error: { message_code: string } }).error.message_code).toBe('org.role_refused');

    // The operator console's route: any account, operators only.
    expect((await api(owner.cookie, `/api/admin/accounts/${owner.userId}/statements/${MONTH}.json`)).status).toBe(403);
    const operator = await createAccount({});
    await db.user.update({ where: { id: operator.userId }, data: { role: 'admin' } });
    const asOperator = await api(await signIn(gw.url, operator, '10.42.5.5'), `/api/admin/accounts/${owner.userId}/statements/${MONTH}.json`);
    expect(asOperator.status).toBe(200);
    expect(((await asOperator.json()) as StatementJson).closing_balance.usd).toBe(dec(closing()));
  });
});
