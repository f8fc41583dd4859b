import { describe, expect, it } from 'vitest';
import { categoryOf, parseStatementMonth, recentMonths, statementCny, type Statement } from '@/lib/statements/statement';
import { categoryLabel, statementCsv, statementPdf } from '@/lib/statements/documents';
import { pdfString } from '@/lib/statements/pdf';
import { GatewayError } from '@/lib/errors';
import { parsePdf } from '../support/pdf';
import { parseCsv } from '@/lib/admin/reconcile';

const P = 1_000_000_000_000n;
const now = new Date('2026-11-28T10:00:00Z');

function refusal(month: string): string | undefined {
  try {
    parseStatementMonth(month, now);
    return undefined;
  } catch (err) {
    return (err as GatewayError).messageCode;
  }
}

describe('statement months', () => {
  it('are UTC months: [first instant, first instant of the next)', () => {
    expect(parseStatementMonth('2026-11', now)).toEqual({ month: '2026-11', from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z') });
    expect(parseStatementMonth('2025-12', now).to).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(recentMonths(now, 3)).toEqual(['2026-11', '2026-10', '2026-09']);
    expect(recentMonths(new Date('2026-01-31T23:59:59Z'), 2)).toEqual(['2026-01', '2025-12']);
  });

  it('refuses what is not a month, and a month not begun', () => {
    for (const bad of ['2026-13', '2026-00', '2026-1', '26-11', '', '2026-11-01', '1999-12']) expect(refusal(bad), bad).toBe('statement.month_invalid');
    expect(refusal('2026-12')).toBe('statement.month_future');
  });
});

describe('categories', () => {
  it('split recharges into Stripe payments and codes, and keep a kind they do not know under its own name', () => {
    expect(categoryOf('recharge', '0b0e7a52-8d5c-4a3e-9f67-3f1a8d3c2b11')).toBe('recharge');
    expect(categoryOf('recharge', 'redeem:abc')).toBe('code');
    expect(categoryOf('subscription', null)).toBe('plan');
    expect(categoryOf('admin_credit', null)).toBe('adjustment');
    expect(categoryOf('gift', null)).toBe('kind:gift');
    expect(categoryLabel('kind:gift')).toBe('gift');
    expect(categoryLabel('plan')).toBe('Plan charges');
  });
});

const statement: Statement = {
  month: '2026-10',
  from: new Date('2026-10-01T00:00:00Z'),
  to: new Date('2026-11-01T00:00:00Z'),
  accountId: '0b0e7a52-8d5c-4a3e-9f67-3f1a8d3c2b11',
  accountName: '深圳 (Acme)',
  isOrganization: true,
  partial: false,
  generatedAt: now,
  cnyRate: '7.2',
  cnyRateNano: 7_200_000_000n,
  openingUsd: 5n * P + 1n,
  creditsUsd: 10n * P,
  debitsUsd: 3n * P + 7n,
  closingUsd: 12n * P - 6n,
  ledgerClosingUsd: 12n * P - 6n,
  reconciled: true,
  lines: [
    { category: 'recharge', kind: 'recharge', entries: 1, creditsUsd: 10n * P, debitsUsd: 0n, amountUsd: 10n * P },
    { category: 'plan', kind: 'subscription', entries: 1, creditsUsd: 0n, debitsUsd: 3n * P, amountUsd: -3n * P },
    { category: 'usage', kind: 'usage', entries: 2, creditsUsd: 0n, debitsUsd: 7n, amountUsd: -7n },
  ],
  transactions: [
    {
      id: '1',
      at: new Date('2026-10-02T00:00:00Z'),
      kind: 'recharge',
      category: 'recharge',
      amountUsd: 10n * P,
      balanceAfterUsd: 15n * P + 1n,
      reference: '0b0e7a52-8d5c-4a3e-9f67-3f1a8d3c2b11',
      note: null,
      paymentId: '0b0e7a52-8d5c-4a3e-9f67-3f1a8d3c2b11',
      hostedInvoiceUrl: null,
    },
    {
      id: '2',
      at: new Date('2026-10-03T00:00:00Z'),
      kind: 'subscription',
      category: 'plan',
      amountUsd: -3n * P,
      balanceAfterUsd: 12n * P + 1n,
      reference: 'https://invoice.stripe.com/i/acct_1/test_1',
      note: 'Pro, October',
      paymentId: null,
      hostedInvoiceUrl: 'https://invoice.stripe.com/i/acct_1/test_1',
    },
  ],
  usageByModel: [{ model: 'gpt-4o-mini', requests: 2, promptTokens: 10, completionTokens: 20, debitsUsd: 7n }],
  invoices: [],
};

describe('statement documents', () => {
  it('the CSV: signed amounts that add up from the opening to the closing, and the invoice link', () => {
    const rows = parseCsv(statementCsv(statement));
    const closing = rows.find((r) => r[2] === 'closing_balance')!;
    expect(closing[5]).toBe('11.999999999994');
    expect(closing[6]).toBe('86.399999999957'); // 11.999999999994 x 7.2 = 86.3999999999568, half up
    const details = rows.filter((r) => r[0] === 'transaction' || r[0] === 'usage').map((r) => r[5]!);
    expect(details).toEqual(['10', '-3', '-0.000000000007']);
    // A debit's CNY is the negative of the same credit's: -0.0000042 USD is -0.00003024 CNY exactly, -7e-12 USD rounds to -5e-11.
    expect(rows.find((r) => r[0] === 'usage')![6]).toBe('-0.00000000005');
    expect(statementCny(statement, -4_200_000n)).toBe(-30_240_000n);
    expect(rows.find((r) => r[2] === 'plan' && r[0] === 'transaction')![9]).toBe('https://invoice.stripe.com/i/acct_1/test_1');
  });

  it('the PDF parses and shows the figures; characters outside WinAnsi print as ?', () => {
    const pdf = parsePdf(statementPdf(statement));
    const text = pdf.text.join('\n');
    expect(text).toContain('$11.999999999994');
    expect(text).toContain('¥86.399999999957');
    expect(text).toContain('Plan charges (1)');
    expect(text).toContain('?? (Acme)');
    expect(pdfString('a(b)\\c ¥')).toBe('(a\\(b\\)\\\\c \\245)');
  });
});
