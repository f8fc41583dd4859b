// The statement and receipt responses shared by the account API and the operator console's API.
import { codedError } from '@/lib/errors';
import { decimalText } from '@/lib/format';
import { buildStatement, parseStatementMonth, statementCny, type Statement } from './statement';
import { categoryLabel, receiptPdf, statementCsv, statementPdf } from './documents';
import { paidRecharge } from './receipt';

const FILE = /^(\d{4}-\d{2})(?:\.(csv|pdf|json))?$/;

/** `2026-11.csv`, `2026-11.pdf`, `2026-11.json` or `2026-11` (JSON) for `accountId`. */
export async function statementResponse(accountId: string, file: string): Promise<Response> {
  const m = FILE.exec(file);
  if (!m) throw codedError('invalid_request', 'statement.format_invalid', undefined, { param: 'month' });
  const statement = await buildStatement(accountId, parseStatementMonth(m[1]));
  const name = `statement-${statement.month}`;
  const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  switch (m[2]) {
    case 'csv':
      return new Response(statementCsv(statement), {
        headers: { ...headers, 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}.csv"` },
      });
    case 'pdf':
      return new Response(new Uint8Array(statementPdf(statement)), {
        headers: { ...headers, 'content-type': 'application/pdf', 'content-disposition': `inline; filename="${name}.pdf"` },
      });
    default:
      return new Response(JSON.stringify(statementJson(statement)), { headers: { ...headers, 'content-type': 'application/json' } });
  }
}

/** `{paymentId}.pdf` (or the bare id) of a paid recharge of `accountId`. */
export async function receiptResponse(accountId: string, file: string): Promise<Response> {
  const receipt = await paidRecharge(accountId, file.replace(/\.pdf$/, ''));
  return new Response(new Uint8Array(receiptPdf(receipt)), {
    headers: {
      'content-type': 'application/pdf',
      'content-disposition': `inline; filename="receipt-${receipt.paymentId}.pdf"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}

/** Money as exact decimal text, USD with its CNY beside it. */
export function statementJson(s: Statement) {
  const money = (usd: bigint) => ({ usd: decimalText(usd), cny: decimalText(statementCny(s, usd)) });
  return {
    object: 'statement',
    account_id: s.accountId,
    account_name: s.accountName,
    month: s.month,
    time_zone: 'UTC',
    from: s.from.toISOString(),
    to: s.to.toISOString(),
    partial: s.partial,
    generated_at: s.generatedAt.toISOString(),
    cny_rate: s.cnyRate,
    opening_balance: money(s.openingUsd),
    total_credits: money(s.creditsUsd),
    total_debits: money(s.debitsUsd),
    closing_balance: money(s.closingUsd),
    ledger_balance: money(s.ledgerClosingUsd),
    reconciled: s.reconciled,
    lines: s.lines.map((l) => ({
      category: l.category.startsWith('kind:') ? l.category.slice(5) : l.category,
      label: categoryLabel(l.category),
      kind: l.kind,
      entries: l.entries,
      credits: money(l.creditsUsd),
      debits: money(l.debitsUsd),
      amount: money(l.amountUsd),
    })),
    transactions: s.transactions.map((t) => ({
      id: t.id,
      at: t.at.toISOString(),
      kind: t.kind,
      category: t.category.startsWith('kind:') ? t.category.slice(5) : t.category,
      amount: money(t.amountUsd),
      balance_after_usd: decimalText(t.balanceAfterUsd),
      reference: t.reference,
      note: t.note,
      payment_id: t.paymentId,
      hosted_invoice_url: t.hostedInvoiceUrl,
    })),
    usage_by_model: s.usageByModel.map((u) => ({
      model: u.model,
      requests: u.requests,
      prompt_tokens: u.promptTokens,
      completion_tokens: u.completionTokens,
      amount: money(-u.debitsUsd),
    })),
    invoices: s.invoices.map((i) => ({ plan_id: i.planId, status: i.status, hosted_invoice_url: i.hostedInvoiceUrl })),
  };
}
