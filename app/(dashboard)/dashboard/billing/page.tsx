import { serverT } from '@/lib/i18n/server';
import type { Phrase, Translate } from '@/lib/i18n/translate';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import Link from 'next/link';
import { env } from '@/lib/env';
import { getConfig } from '@/lib/config';
import { formatPico, usdToCny, usdToPico } from '@/lib/money';
import { GatewayError } from '@/lib/errors';
import {
  decodeLedgerCursor,
  getAccount,
  ledgerHistory,
  startOfUtcMonth,
  usageTotals,
  type LedgerCursor,
  type LedgerItem,
  type LedgerPage,
} from '@/lib/dashboard/queries';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { apiAllowed } from '@/lib/orgs/roles';
import { cny, int, usd } from '@/lib/dashboard/format';
import { Alert } from '@/components/ui/alert';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { buttonClass } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { MoneyHistory } from '@/components/dashboard/money-history';
import { RechargeForm } from '@/components/dashboard/recharge-form';
import { RedeemForm } from '@/components/dashboard/redeem-form';
import { LocalTime } from '@/components/ui/local-time';
import { PlanCard, PlansOnOffer } from '@/components/dashboard/plan-card';
import { PlanBillingButton } from '@/components/dashboard/plan-billing-button';
import { planStatus } from '@/lib/plans/subscriptions';
import { verificationPending } from '@/lib/auth/email-verification';
import { VerifyEmailBanner } from '@/components/dashboard/verify-email-banner';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Billing')} · Model Gateway` };
}

type SearchParams = Record<string, string | string[] | undefined>;

const kinds: Record<string, { label: Phrase; tone: BadgeTone } | undefined> = {
  recharge: { label: 'Recharge', tone: 'green' },
  usage: { label: 'Usage', tone: 'neutral' },
  admin_credit: { label: 'Credit', tone: 'blue' },
  refund: { label: 'Refund', tone: 'violet' },
  subscription: { label: 'Plan charge', tone: 'violet' },
};

/** A ledger kind's badge; a kind this page does not know shows under its own name rather than break the page. */
function KindBadge({ kind, t }: { kind: string; t: Translate }) {
  const known = kinds[kind];
  return <Badge tone={known?.tone ?? 'neutral'}>{known ? t(known.label) : kind}</Badge>;
}

function details(item: LedgerItem, t: Translate): string {
  if (item.kind === 'usage') return item.entries === 1 ? t('1 request') : t('{n} requests', { n: int(item.entries) });
  return [item.note, item.reference && item.kind === 'recharge' ? t('payment {ref}', { ref: item.reference }) : item.reference].filter(Boolean).join(' · ');
}

const paymentId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Stripe recharge (its reference is the Payment id; a code's is `redeem:…`) has a receipt. */
function ReceiptLink({ item, t }: { item: LedgerItem; t: Translate }) {
  if (item.kind !== 'recharge' || !item.reference || !paymentId.test(item.reference)) return null;
  return (
    <a href={`/api/receipts/${item.reference}.pdf`} className="text-xs font-medium text-indigo-700 underline" data-testid="ledger-receipt">
      {t('Receipt')}
    </a>
  );
}

/** Stripe sends the browser back here; the query names what happened. */
function returnNotice(sp: SearchParams): 'paid' | 'cancelled' | null {
  const values = ['recharge', 'payment', 'checkout', 'status'].map((k) => sp[k]).flat();
  if (values.some((v) => v === 'success' || v === 'succeeded' || v === 'paid') || sp.success !== undefined || sp.session_id !== undefined) return 'paid';
  if (values.some((v) => v === 'cancel' || v === 'canceled' || v === 'cancelled') || sp.canceled !== undefined || sp.cancelled !== undefined)
    return 'cancelled';
  return null;
}

/** Without Stripe there is nothing to click that could only fail: who to ask instead. */
function NoPayments({ contact, t }: { contact: string | undefined; t: Translate }) {
  const href = contact ? (/^https?:\/\//.test(contact) ? contact : contact.includes('@') ? `mailto:${contact}` : null) : null;
  return (
    <div data-testid="payments-status" className="space-y-2 text-sm text-slate-700">
      <p className="font-medium text-slate-900">{t('Card payments are not set up on this deployment.')}</p>
      <p data-testid="payments-contact">
        {t('To add credit, contact')}{' '}
        {contact ? (
          href ? (
            <a href={href} className="font-medium text-indigo-700 underline hover:text-indigo-600">
              {contact}
            </a>
          ) : (
            <span className="font-medium text-slate-900">{contact}</span>
          )
        ) : (
          t('the operator of this gateway')
        )}{' '}
        {t('with the email address of your account. Credit shows up in the history below as soon as it is added.')}
      </p>
    </div>
  );
}

const presetsWithin = (min: bigint, max: bigint) => ['10', '25', '50', '100'].filter((p) => usdToPico(p) >= min && usdToPico(p) <= max);

export default async function BillingPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const user = await requirePageAccount('/dashboard/billing');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  // An admin reads the money but cannot add any (owner and billing only); the API refuses it too.
  const canPay = apiAllowed(user.role, 'POST', '/api/payment/recharge');
  const sp = await searchParams;
  const config = getConfig();

  let before: LedgerCursor | undefined;
  let problem: string | null = null;
  const beforeParam = typeof sp.before === 'string' ? sp.before : undefined;
  try {
    before = beforeParam ? decodeLedgerCursor(beforeParam) : undefined;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    problem = err.message;
  }
  const emptyPage: LedgerPage = { data: [], nextCursor: null };
  const now = new Date();
  const [account, ledger, month, plan, unverified] = await Promise.all([
    getAccount(user.id),
    problem ? emptyPage : ledgerHistory(user.id, { limit: 50, before }),
    usageTotals(user.id, startOfUtcMonth(now), new Date(now.getTime() + 60_000)),
    planStatus(user.id),
    verificationPending(user.id),
  ]);
  const { t } = await currentMessages();
  const tr = await serverT();
  const balance = account?.balanceUsd ?? 0n;
  const notice = returnNotice(sp);

  return (
    <>
      <PageHeader title={t.pages.billing.title} description={t.pages.billing.description} />

      {/* The mailed verification link comes back here (GET /api/auth/verify-email). */}
      {sp.email === 'verified' && !unverified && (
        <Alert tone="success" className="mb-4" data-testid="email-verified">
          {tr('Your email address is verified.')}
        </Alert>
      )}
      {(sp.email === 'expired' || sp.email === 'invalid') && unverified && (
        <Alert tone="error" className="mb-4" data-testid="email-verify-failed">
          {sp.email === 'expired'
            ? tr('That verification link has expired: send a new one below.')
            : tr('That verification link is not valid: send a new one below.')}
        </Alert>
      )}
      {unverified && <VerifyEmailBanner email={user.email} />}

      {notice === 'paid' && (
        <Alert tone="success" className="mb-4" title={tr('Thanks, your payment went through.')}>
          {tr('The credit is added as soon as Stripe confirms it, usually within a few seconds. Reload to see it.')}
        </Alert>
      )}
      {sp.plan === 'success' && (
        <Alert tone="success" className="mb-4" title={tr('Thanks, your payment went through.')}>
          {tr('Thanks: your plan starts as soon as Stripe confirms the payment, usually within a few seconds. Reload to see it.')}
        </Alert>
      )}
      {sp.plan === 'updated' && (
        <Alert tone="success" className="mb-4">
          {tr('Your plan was changed; Stripe prorates the rest of this period.')}
        </Alert>
      )}
      {(notice === 'cancelled' || sp.plan === 'cancelled') && (
        <Alert tone="info" className="mb-4">
          {tr('The payment was cancelled; nothing was charged.')}
        </Alert>
      )}

      <div className="mb-4 sm:mb-6">
        {plan ? (
          <PlanCard
            status={plan}
            cfg={config}
            t={tr}
            actions={
              canPay && env.STRIPE_SECRET_KEY && plan.subscription.source === 'stripe' ? <PlanBillingButton action="portal" variant="secondary" /> : undefined
            }
          />
        ) : (
          <PlansOnOffer
            cfg={config}
            t={tr}
            subscribe={canPay && env.STRIPE_SECRET_KEY ? (p) => (p.stripePriceId ? <PlanBillingButton action="subscribe" plan={p.id} /> : null) : undefined}
            footer={
              env.STRIPE_SECRET_KEY && [...config.plans.values()].some((p) => p.stripePriceId)
                ? tr('Subscribe by card with Stripe, or redeem a plan code below.')
                : tr('To get a plan, redeem a plan code below or ask the operator of this gateway.')
            }
          />
        )}
      </div>

      <div className="grid gap-4 lg:grid-cols-3">
        <Card className="px-4 py-4 sm:px-5" data-testid="billing-balance">
          <div>
            <p className="text-sm text-slate-500">{t.overview.balance}</p>
            <p className="mt-1.5 text-3xl font-semibold tracking-tight text-slate-900 tabular-nums">{usd(balance)}</p>
            <p className="mt-1 text-sm text-slate-500 tabular-nums">
              {cny(usdToCny(balance, config.cnyRateNano))} {t.overview.atRate(String(config.usdToCny))}
            </p>
          </div>
          <dl className="mt-6 space-y-2 border-t border-slate-100 pt-4 text-sm">
            <div className="flex justify-between gap-3">
              <dt className="text-slate-500">{tr('Spent this month')}</dt>
              <dd className="tabular-nums text-slate-900">{usd(month.spendUsd)}</dd>
            </div>
            <div className="flex justify-between gap-3">
              <dt className="text-slate-500">{t.overview.requestsMonth}</dt>
              <dd className="tabular-nums text-slate-900">{int(month.requests)}</dd>
            </div>
          </dl>
          {balance <= 0n && <p className="mt-4 text-sm text-red-700">{tr('Requests are refused with 402 until you add credit.')}</p>}
        </Card>
        <Card className="lg:col-span-2">
          <CardHeader title={t.overview.addCredit} />
          <CardBody>
            {!canPay ? (
              <p className="text-sm text-slate-600" data-testid="billing-role-note">
                {tr('Your role in this organization cannot add credit: ask its owner or a billing member.')}
              </p>
            ) : env.STRIPE_SECRET_KEY ? (
              <RechargeForm
                min={formatPico(config.rechargeMin)}
                max={formatPico(config.rechargeMax)}
                configured
                presets={presetsWithin(config.rechargeMin, config.rechargeMax)}
              />
            ) : (
              <NoPayments contact={env.SUPPORT_CONTACT} t={tr} />
            )}
            {canPay && <RedeemForm />}
          </CardBody>
        </Card>
      </div>

      <Card className="mt-4 sm:mt-6">
        <CardHeader
          title={tr('History')}
          description={tr('Recharges, credits and refunds one by one; usage totalled per UTC day.')}
          actions={
            <Link href="/dashboard/billing/statements" className={buttonClass({ variant: 'secondary', size: 'sm' })} data-testid="billing-statements">
              {tr('Monthly statements')}
            </Link>
          }
        />
        {problem && (
          <Alert tone="error" className="m-4">
            {problem}
          </Alert>
        )}
        {ledger.data.length === 0 ? (
          <EmptyState title={tr('No balance changes yet')} />
        ) : (
          <MoneyHistory
            label={tr('Balance history')}
            head={{ date: tr('Date'), type: tr('Type'), details: tr('Details'), amount: tr('Amount'), balance: tr('Balance after') }}
            cardTestId="ledger-card"
            rowTestId="ledger-row"
            entries={ledger.data.map((item) => ({
              key: item.key,
              rowData: { 'data-kind': item.kind },
              cardData: { 'data-kind': item.kind },
              badge: <KindBadge kind={item.kind} t={tr} />,
              amount: (
                <>
                  {item.amountUsd > 0n ? '+' : ''}
                  {usd(item.amountUsd)}
                </>
              ),
              amountTone: item.amountUsd > 0n ? 'text-emerald-700' : 'text-slate-900',
              cardDate: item.day ? tr('{day} (UTC day)', { day: item.day }) : <LocalTime iso={item.at.toISOString()} />,
              cardAside: <span className="tabular-nums">{tr('Balance {amount}', { amount: usd(item.balanceAfterUsd) })}</span>,
              note: details(item, tr),
              cardFooter: <ReceiptLink item={item} t={tr} />,
              tableDate: item.day ?? <LocalTime iso={item.at.toISOString()} />,
              details: details(item, tr) || '—',
              detailsTitle: details(item, tr),
              links: <ReceiptLink item={item} t={tr} />,
              balance: usd(item.balanceAfterUsd),
            }))}
          />
        )}
        {(ledger.nextCursor || before) && (
          <nav aria-label={tr('Pagination')} className="flex justify-between border-t border-slate-100 px-4 py-3 sm:px-5">
            {before ? (
              <Link href="/dashboard/billing" className={buttonClass({ variant: 'ghost', size: 'sm' })}>
                {tr('Newest')}
              </Link>
            ) : (
              <span />
            )}
            {ledger.nextCursor && (
              <Link href={`/dashboard/billing?before=${ledger.nextCursor}`} className={buttonClass({ variant: 'secondary', size: 'sm' })}>
                {tr('Older →')}
              </Link>
            )}
          </nav>
        )}
      </Card>
    </>
  );
}
