// A statement as CSV and as PDF, and a recharge's receipt as PDF. Figures are exact: CSV cells are
// plain decimals (decimalText), the PDF writes them through the one money formatter (formatMoney).
// Amounts carry their effect on the balance: credits positive, debits negative, so the opening plus
// the category amounts is the closing.
import { csvRow } from '@/lib/dashboard/csv';
import { decimalText, formatCount, formatDateTimeUtc, formatDateUtc, formatMoney } from '@/lib/format';
import { MARGIN, PAGE_WIDTH, PdfWriter } from './pdf';
import { statementCny, type Statement, type StatementCategory } from './statement';
import type { Receipt } from './receipt';

const CATEGORY_LABEL: Record<string, string> = {
  recharge: 'Recharges (Stripe)',
  code: 'Redemption codes',
  plan: 'Plan charges',
  refund: 'Refunds',
  usage: 'Usage',
  adjustment: 'Adjustments',
};

/** A category's English name; a ledger kind this code does not know is named as it is ("kind:x" → "x"). */
export function categoryLabel(category: StatementCategory): string {
  return CATEGORY_LABEL[category] ?? category.slice('kind:'.length);
}

/** The category's key in the CSV's `category` column: the kind's own name for unknown kinds. */
const categoryKey = (category: StatementCategory) => (category.startsWith('kind:') ? category.slice(5) : category);

export const CSV_HEADER = [
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
];

export function statementCsv(s: Statement): string {
  const cny = (usd: bigint) => decimalText(statementCny(s, usd));
  const money = (usd: bigint) => [decimalText(usd), cny(usd)];
  const rows: string[] = [csvRow(CSV_HEADER)];
  const summary = (date: string, key: string, description: string, count: number | null, usd: bigint) =>
    rows.push(csvRow(['summary', date, key, description, count, ...money(usd), null, null, null]));
  summary(formatDateUtc(s.from), 'opening_balance', 'Opening balance', null, s.openingUsd);
  for (const line of s.lines) summary('', categoryKey(line.category), categoryLabel(line.category), line.entries, line.amountUsd);
  summary('', 'total_credits', 'Total credits', null, s.creditsUsd);
  summary('', 'total_debits', 'Total debits', null, -s.debitsUsd);
  const end = s.partial ? s.generatedAt : new Date(s.to.getTime() - 1);
  summary(formatDateUtc(end), 'closing_balance', 'Closing balance', null, s.closingUsd);
  summary(
    formatDateUtc(end),
    'ledger_balance',
    s.reconciled ? 'Ledger balance at month end (reconciled)' : 'Ledger balance at month end (DIFFERS)',
    null,
    s.ledgerClosingUsd,
  );
  for (const t of s.transactions) {
    rows.push(
      csvRow([
        'transaction',
        t.at.toISOString(),
        categoryKey(t.category),
        t.note ?? categoryLabel(t.category),
        null,
        ...money(t.amountUsd),
        decimalText(t.balanceAfterUsd),
        t.reference,
        t.hostedInvoiceUrl,
      ]),
    );
  }
  for (const u of s.usageByModel) {
    rows.push(csvRow(['usage', null, 'usage', u.model || '(unknown model)', u.requests, ...money(-u.debitsUsd), null, null, null]));
  }
  for (const inv of s.invoices)
    rows.push(csvRow(['invoice', null, 'plan', `${inv.planId} (${inv.status})`, null, null, null, null, null, inv.hostedInvoiceUrl]));
  return rows.join('');
}

export function monthTitle(month: string): string {
  const names = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  return `${names[Number(month.slice(5, 7)) - 1]} ${month.slice(0, 4)}`;
}

const RIGHT = PAGE_WIDTH - MARGIN;
const CNY_COL = RIGHT;
const USD_COL = RIGHT - 150;

export function statementPdf(s: Statement): Buffer {
  const w = new PdfWriter(`Statement ${s.month} · ${s.accountName}`);
  const usd = (p: bigint) => formatMoney(p, 'USD');
  const cny = (p: bigint) => formatMoney(statementCny(s, p), 'CNY');
  const amountRow = (label: string, p: bigint, opts: { bold?: boolean; indent?: number } = {}) => {
    w.text(MARGIN + (opts.indent ?? 0), label, { font: opts.bold ? 'bold' : 'regular' });
    w.text(USD_COL, usd(p), { align: 'right' }).text(CNY_COL, cny(p), { align: 'right' });
    w.next();
  };
  const tableHead = (...cols: [number, string, 'left' | 'right'][]) => {
    for (const [x, label, align] of cols) w.text(x, label, { font: 'bold', size: 8, gray: 0.3, ...(align === 'right' ? { align } : {}) });
    w.rule().next(15);
  };

  w.text(MARGIN, 'Model Gateway', { font: 'bold', size: 10, gray: 0.4 }).next(22);
  w.text(MARGIN, `Statement · ${monthTitle(s.month)}`, { font: 'bold', size: 18 }).next(20);
  w.text(MARGIN, `${s.isOrganization ? 'Organization' : 'Account'}: ${s.accountName}  (${s.accountId})`).next();
  const period = `${formatDateUtc(s.from)} 00:00 to ${s.partial ? `${formatDateTimeUtc(s.generatedAt)} (month to date)` : `${formatDateUtc(new Date(s.to.getTime() - 1))} 24:00`} UTC`;
  w.text(MARGIN, `Period: ${period}`).next();
  w.text(MARGIN, `CNY at ${s.cnyRate} per USD, each figure converted. Generated ${formatDateTimeUtc(s.generatedAt)} UTC.`, { gray: 0.4 }).next(24);

  w.text(MARGIN, 'Summary', { font: 'bold', size: 12 }).next(16);
  tableHead([MARGIN, 'ITEM', 'left'], [USD_COL, 'USD', 'right'], [CNY_COL, 'CNY', 'right']);
  amountRow('Opening balance', s.openingUsd, { bold: true });
  for (const line of s.lines) amountRow(`${categoryLabel(line.category)} (${formatCount(line.entries)})`, line.amountUsd, { indent: 12 });
  amountRow('Total credits', s.creditsUsd);
  amountRow('Total debits', -s.debitsUsd);
  w.rule(0.5);
  amountRow('Closing balance', s.closingUsd, { bold: true });
  w.text(MARGIN, s.reconciled ? 'Reconciled with the ledger balance at month end.' : `The ledger balance at month end reads ${usd(s.ledgerClosingUsd)}.`, {
    size: 8,
    gray: 0.4,
  });
  w.next(26);

  if (s.transactions.length) {
    w.keep(60).text(MARGIN, 'Transactions', { font: 'bold', size: 12 }).next(16);
    const amountCol = USD_COL + 40;
    tableHead(
      [MARGIN, 'DATE (UTC)', 'left'],
      [MARGIN + 90, 'TYPE', 'left'],
      [MARGIN + 180, 'DETAILS', 'left'],
      [amountCol, 'AMOUNT', 'right'],
      [CNY_COL, 'BALANCE AFTER', 'right'],
    );
    for (const t of s.transactions) {
      w.keep(14);
      w.text(MARGIN, formatDateTimeUtc(t.at).slice(0, 16), { size: 8 });
      w.text(MARGIN + 90, categoryLabel(t.category), { size: 8 });
      const details = [t.note, t.paymentId ? `payment ${t.paymentId.slice(0, 8)}` : t.hostedInvoiceUrl ? 'Stripe invoice' : null].filter(Boolean).join(' · ');
      w.text(MARGIN + 180, clip(details, 26), { size: 8 });
      w.text(amountCol, usd(t.amountUsd), { align: 'right', size: 8 }).text(CNY_COL, usd(t.balanceAfterUsd), { align: 'right', size: 8 });
      w.next(12);
    }
    w.next(14);
  }

  if (s.usageByModel.length) {
    w.keep(60).text(MARGIN, 'Usage by model', { font: 'bold', size: 12 }).next(16);
    tableHead([MARGIN, 'MODEL', 'left'], [MARGIN + 190, 'REQUESTS', 'left'], [USD_COL, 'USD', 'right'], [CNY_COL, 'CNY', 'right']);
    for (const u of s.usageByModel) {
      w.keep(14);
      w.text(MARGIN, clip(u.model || '(unknown model)', 36), { size: 8 }).text(MARGIN + 190, formatCount(u.requests), { size: 8 });
      w.text(USD_COL, usd(-u.debitsUsd), { align: 'right', size: 8 }).text(CNY_COL, cny(-u.debitsUsd), { align: 'right', size: 8 });
      w.next(12);
    }
    w.next(14);
  }

  if (s.invoices.length) {
    w.keep(40).text(MARGIN, 'Plan invoices (Stripe)', { font: 'bold', size: 12 }).next(16);
    for (const inv of s.invoices) w.text(MARGIN, `${inv.planId} (${inv.status}): ${clip(inv.hostedInvoiceUrl, 90)}`, { size: 8 }).next(12);
  }
  return w.toBuffer();
}

export function receiptPdf(r: Receipt): Buffer {
  const w = new PdfWriter(`Receipt ${r.paymentId}`);
  w.text(MARGIN, 'Model Gateway', { font: 'bold', size: 10, gray: 0.4 }).next(22);
  w.text(MARGIN, 'Receipt', { font: 'bold', size: 18 }).next(24);
  const row = (label: string, value: string, mono = false) => {
    w.text(MARGIN, label, { gray: 0.35 });
    w.text(MARGIN + 130, value, { font: mono ? 'mono' : 'regular' });
    w.next(15);
  };
  row('Receipt number', r.paymentId, true);
  row('Paid', `${formatDateTimeUtc(r.paidAt)} UTC`);
  row(r.isOrganization ? 'Organization' : 'Account', r.accountName);
  row('Account id', r.accountId, true);
  row('Paid with', 'Card, through Stripe Checkout');
  row('Stripe session', r.stripeSessionId, true);
  w.next(10);
  w.text(MARGIN, 'Description', { font: 'bold', size: 8, gray: 0.3 })
    .text(USD_COL, 'USD', { align: 'right', size: 8 })
    .text(CNY_COL, 'CNY', { align: 'right', size: 8 });
  w.rule().next(15);
  w.text(MARGIN, 'Prepaid API balance top-up');
  w.text(USD_COL, formatMoney(r.amountUsd, 'USD'), { align: 'right' }).text(CNY_COL, formatMoney(r.amountCny, 'CNY'), { align: 'right' });
  w.next();
  w.rule(0.5);
  w.text(MARGIN, 'Total paid', { font: 'bold' }).text(USD_COL, formatMoney(r.amountUsd, 'USD'), { align: 'right' });
  w.text(CNY_COL, formatMoney(r.amountCny, 'CNY'), { align: 'right' });
  w.next(24);
  if (r.balanceAfterUsd !== null) w.text(MARGIN, `Balance after this credit: ${formatMoney(r.balanceAfterUsd, 'USD')}.`).next();
  w.text(MARGIN, `Charged in USD; CNY at ${r.cnyRate} per USD for reference.`, { gray: 0.4 }).next();
  return w.toBuffer();
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
