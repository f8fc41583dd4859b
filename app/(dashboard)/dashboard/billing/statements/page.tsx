import type { Metadata } from 'next';
import Link from 'next/link';
import { serverT } from '@/lib/i18n/server';
import { coded, type Phrase, type Translate } from '@/lib/i18n/translate';
import { GatewayError } from '@/lib/errors';
import { formatCount, formatDateTimeUtc, formatMoney } from '@/lib/format';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { buildStatement, parseStatementMonth, recentMonths, statementCny, type Statement, type StatementCategory } from '@/lib/statements/statement';
import { Alert } from '@/components/ui/alert';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { buttonClass } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Label, Select } from '@/components/ui/input';
import { ListOrTable } from '@/components/ui/list-or-table';
import { MoneyHistory } from '@/components/dashboard/money-history';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Statements')} · Model Gateway` };
}

const CATEGORY: Record<string, { label: Phrase; tone: BadgeTone }> = {
  recharge: { label: 'Recharges (Stripe)', tone: 'green' },
  code: { label: 'Redemption codes', tone: 'green' },
  plan: { label: 'Plan charges', tone: 'violet' },
  refund: { label: 'Refunds', tone: 'violet' },
  usage: { label: 'Usage', tone: 'neutral' },
  adjustment: { label: 'Adjustments', tone: 'blue' },
};

/** A category's name in the reader's language; a ledger kind this page does not know reads as its own name. */
function label(category: StatementCategory, t: Translate): string {
  const known = CATEGORY[category];
  return known ? t(known.label) : category.slice('kind:'.length);
}
const tone = (category: StatementCategory): BadgeTone => CATEGORY[category]?.tone ?? 'neutral';

function Money({ s, usd, testId, strong }: { s: Statement; usd: bigint; testId?: string; strong?: boolean }) {
  return (
    <span className="text-right tabular-nums">
      <span className={`block ${strong ? 'font-semibold text-slate-900' : 'text-slate-900'}`} data-testid={testId}>
        {formatMoney(usd, 'USD')}
      </span>
      <span className="block text-xs text-slate-500">{formatMoney(statementCny(s, usd), 'CNY')}</span>
    </span>
  );
}

export default async function StatementsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requirePageAccount('/dashboard/billing/statements');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const sp = await searchParams;
  const tr = await serverT();
  const now = new Date();
  const months = recentMonths(now);
  const asked = typeof sp.month === 'string' ? sp.month : months[0]!;

  let statement: Statement | null = null;
  let problem: string | null = null;
  try {
    statement = await buildStatement(user.id, parseStatementMonth(asked, now), now);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    problem = coded(tr, { message_code: err.messageCode, params: err.params, message: err.message });
  }
  const s = statement;

  return (
    <>
      <PageHeader
        title={tr('Statements')}
        description={tr('Your balance month by month (UTC months): every figure is the sum of the ledger entries, exact to the last digit.')}
        actions={
          <Link href="/dashboard/billing" className={buttonClass({ variant: 'ghost', size: 'sm' })}>
            {tr('← Billing')}
          </Link>
        }
      />

      <Card className="mb-4 px-4 py-4 sm:px-5">
        <form method="get" action="/dashboard/billing/statements" className="flex flex-wrap items-end gap-3" data-testid="statement-form">
          <div className="min-w-40 space-y-1.5">
            <Label htmlFor="statement-month">{tr('Month (UTC)')}</Label>
            <Select id="statement-month" name="month" defaultValue={months.includes(asked) ? asked : months[0]}>
              {months.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </Select>
          </div>
          <button type="submit" className={buttonClass()}>
            {tr('Show')}
          </button>
          {s && (
            <>
              <a href={`/api/statements/${s.month}.csv`} className={buttonClass({ variant: 'secondary' })} data-testid="statement-csv" download>
                {tr('Download CSV')}
              </a>
              <a href={`/api/statements/${s.month}.pdf`} className={buttonClass({ variant: 'secondary' })} data-testid="statement-pdf">
                {tr('Download PDF')}
              </a>
            </>
          )}
        </form>
      </Card>

      {problem && (
        <Alert tone="error" className="mb-4">
          {problem}
        </Alert>
      )}

      {s && (
        <>
          <Card data-testid="statement-summary">
            <CardHeader
              title={tr('Statement for {month}', { month: s.month })}
              description={
                s.partial
                  ? tr('Month to date, as of {time} UTC. CNY at {rate} per USD.', { time: formatDateTimeUtc(s.generatedAt), rate: s.cnyRate })
                  : tr('The whole month, UTC. CNY at {rate} per USD.', { rate: s.cnyRate })
              }
            />
            <CardBody>
              <dl className="divide-y divide-slate-100 text-sm">
                <div className="flex items-start justify-between gap-3 py-2">
                  <dt className="font-medium text-slate-900">{tr('Opening balance')}</dt>
                  <dd>
                    <Money s={s} usd={s.openingUsd} testId="statement-opening" strong />
                  </dd>
                </div>
                {s.lines.map((line) => (
                  <div
                    key={line.category}
                    className="flex items-start justify-between gap-3 py-2 pl-3"
                    data-testid="statement-line"
                    data-category={line.category}
                  >
                    <dt className="min-w-0 text-slate-600">
                      {label(line.category, tr)} <span className="text-slate-500">({formatCount(line.entries)})</span>
                    </dt>
                    <dd>
                      <Money s={s} usd={line.amountUsd} testId={`statement-line-${line.category}`} />
                    </dd>
                  </div>
                ))}
                <div className="flex items-start justify-between gap-3 py-2">
                  <dt className="text-slate-600">{tr('Total credits')}</dt>
                  <dd>
                    <Money s={s} usd={s.creditsUsd} testId="statement-credits" />
                  </dd>
                </div>
                <div className="flex items-start justify-between gap-3 py-2">
                  <dt className="text-slate-600">{tr('Total debits')}</dt>
                  <dd>
                    <Money s={s} usd={-s.debitsUsd} testId="statement-debits" />
                  </dd>
                </div>
                <div className="flex items-start justify-between gap-3 py-2">
                  <dt className="font-medium text-slate-900">{tr('Closing balance')}</dt>
                  <dd>
                    <Money s={s} usd={s.closingUsd} testId="statement-closing" strong />
                  </dd>
                </div>
              </dl>
              <p className="mt-3 text-xs text-slate-500" data-testid="statement-reconciled" data-reconciled={String(s.reconciled)}>
                {s.reconciled
                  ? tr('Reconciled: the closing balance is the ledger’s balance after its last entry of the month.')
                  : tr('The ledger’s balance after its last entry of the month reads {amount}.', { amount: formatMoney(s.ledgerClosingUsd) })}
              </p>
            </CardBody>
          </Card>

          <Card className="mt-4 sm:mt-6">
            <CardHeader
              title={tr('Transactions')}
              description={tr('Recharges, codes, plan charges, refunds and adjustments one by one; usage is by model below.')}
            />
            {s.transactions.length === 0 ? (
              <EmptyState title={tr('No transactions this month')} />
            ) : (
              <MoneyHistory
                label={tr('Transactions')}
                head={{ date: tr('Date (UTC)'), type: tr('Type'), details: tr('Details'), amount: tr('Amount'), balance: tr('Balance after') }}
                cardTestId="statement-tx-card"
                rowTestId="statement-tx-row"
                wrapAside
                entries={s.transactions.map((t) => ({
                  key: t.id,
                  rowData: { 'data-category': t.category },
                  cardData: {},
                  badge: <Badge tone={tone(t.category)}>{label(t.category, tr)}</Badge>,
                  amount: formatMoney(t.amountUsd),
                  cardDate: formatDateTimeUtc(t.at),
                  cardAside: <TxLinks t={t} tr={tr} />,
                  note: t.note,
                  tableDate: formatDateTimeUtc(t.at),
                  details: t.note ?? '—',
                  links: <TxLinks t={t} tr={tr} />,
                  balance: formatMoney(t.balanceAfterUsd),
                }))}
              />
            )}
          </Card>

          <Card className="mt-4 sm:mt-6">
            <CardHeader title={tr('Usage by model')} />
            {s.usageByModel.length === 0 ? (
              <EmptyState title={tr('No usage this month')} />
            ) : (
              <ListOrTable
                label={tr('Usage by model')}
                items={s.usageByModel.map((u) => (
                  <li key={u.model} className="px-4 py-3" data-testid="statement-usage-card">
                    <div className="flex items-start justify-between gap-3">
                      <span className="min-w-0 break-all font-medium text-slate-900">{u.model || tr('(unknown model)')}</span>
                      <Money s={s} usd={-u.debitsUsd} />
                    </div>
                    <p className="text-sm text-slate-600">{u.requests === 1 ? tr('1 request') : tr('{n} requests', { n: formatCount(u.requests) })}</p>
                  </li>
                ))}
                table={
                  <Table>
                    <THead>
                      <tr>
                        <Th>{tr('Model')}</Th>
                        <Th className="text-right">{tr('Requests')}</Th>
                        <Th className="text-right">{tr('Input tokens')}</Th>
                        <Th className="text-right">{tr('Output tokens')}</Th>
                        <Th className="text-right">USD</Th>
                        <Th className="text-right">CNY</Th>
                      </tr>
                    </THead>
                    <TBody>
                      {s.usageByModel.map((u) => (
                        <Tr key={u.model} data-testid="statement-usage-row">
                          <Td className="break-all">{u.model || tr('(unknown model)')}</Td>
                          <Td className="text-right tabular-nums">{formatCount(u.requests)}</Td>
                          <Td className="text-right tabular-nums">{formatCount(u.promptTokens)}</Td>
                          <Td className="text-right tabular-nums">{formatCount(u.completionTokens)}</Td>
                          <Td className="whitespace-nowrap text-right tabular-nums">{formatMoney(-u.debitsUsd)}</Td>
                          <Td className="whitespace-nowrap text-right tabular-nums">{formatMoney(statementCny(s, -u.debitsUsd), 'CNY')}</Td>
                        </Tr>
                      ))}
                    </TBody>
                  </Table>
                }
              />
            )}
          </Card>

          {s.invoices.length > 0 && (
            <Card className="mt-4 sm:mt-6">
              <CardHeader title={tr('Plan invoices')} />
              <ul className="divide-y divide-slate-100">
                {s.invoices.map((inv) => (
                  <li key={inv.hostedInvoiceUrl} className="flex flex-wrap justify-between gap-2 px-4 py-3 text-sm sm:px-5">
                    <span>
                      {inv.planId} <span className="text-slate-500">({inv.status})</span>
                    </span>
                    <a href={inv.hostedInvoiceUrl} className="font-medium text-indigo-700 underline" rel="noreferrer" target="_blank">
                      {tr('Stripe invoice')}
                    </a>
                  </li>
                ))}
              </ul>
            </Card>
          )}
        </>
      )}
    </>
  );
}

function TxLinks({ t, tr }: { t: Statement['transactions'][number]; tr: Translate }) {
  if (t.paymentId)
    return (
      <a href={`/api/receipts/${t.paymentId}.pdf`} className="text-sm font-medium text-indigo-700 underline" data-testid="statement-receipt">
        {tr('Receipt')}
      </a>
    );
  if (t.hostedInvoiceUrl)
    return (
      <a href={t.hostedInvoiceUrl} className="text-sm font-medium text-indigo-700 underline" rel="noreferrer" target="_blank">
        {tr('Stripe invoice')}
      </a>
    );
  return null;
}
