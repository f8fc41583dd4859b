'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { useState, type FormEvent } from 'react';
import { usdToPico } from '@/lib/money';
import { formatMoneyText } from '@/lib/format';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { cn } from '@/components/ui/cn';
import { Input, Label } from '@/components/ui/input';

export const PAYMENTS_NOT_CONFIGURED = 'Payments are not set up on this deployment.' as const;

const amountPattern = /^\d{1,7}(\.\d{1,2})?$/;

/** Starts a Stripe Checkout for the amount; the balance is credited by the webhook once Stripe confirms. */
export function RechargeForm({ min, max, configured, presets }: { min: string; max: string; configured: boolean; presets: string[] }) {
  const t = useT();
  const locale = useLocale();
  const [amount, setAmount] = useState(presets[1] ?? presets[0] ?? min);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notConfigured, setNotConfigured] = useState(!configured);

  function problem(value: string): string | null {
    if (!amountPattern.test(value.trim())) return t('Enter an amount in US dollars, with at most two decimals.');
    const pico = usdToPico(value.trim());
    if (pico < usdToPico(min) || pico > usdToPico(max))
      return t('Enter an amount from {min} to {max}.', { min: formatMoneyText(min), max: formatMoneyText(max) });
    return null;
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const invalid = problem(amount);
    if (invalid) {
      setError(invalid);
      return;
    }
    setBusy(true);
    try {
      const res = await fetch('/api/payment/recharge', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount_usd: Number(amount.trim()) }),
      });
      const body = (await res.json().catch(() => ({}))) as { url?: string } & ApiErrorJson;
      if (res.ok && body.url) {
        window.location.assign(body.url);
        return;
      }
      if (body.error?.code === 'payments_not_configured' || (res.status === 503 && !body.error?.code)) setNotConfigured(true);
      else if (res.status === 429) setError(apiErrorText(locale, body, res.status, t('Too many recharge attempts. Wait a minute and try again.')));
      else if (res.status === 401) setError(t('Your session has expired. Log in again.'));
      else setError(apiErrorText(locale, body, res.status, t('The payment could not be started. Try again.')));
    } catch {
      setError(t('Network error: the payment could not be started.'));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="space-y-4" noValidate>
      {notConfigured && (
        <Alert tone="warning" data-testid="payments-status" title={t(PAYMENTS_NOT_CONFIGURED)}>
          {t('Card payments need Stripe keys on the server. Ask the operator of this gateway to add credit to your account.')}
        </Alert>
      )}
      <div className="space-y-1.5">
        <Label htmlFor="recharge-amount">{t('Amount (USD)')}</Label>
        <div className="flex flex-wrap gap-2">
          {presets.map((p) => (
            <button
              key={p}
              type="button"
              onClick={() => setAmount(p)}
              aria-pressed={amount === p}
              className={cn(
                'h-10 rounded-md border px-3 text-sm font-medium tabular-nums transition-colors',
                amount === p ? 'border-slate-900 bg-slate-900 text-white' : 'border-slate-300 bg-white text-slate-700 hover:bg-slate-50',
              )}
            >
              ${p}
            </button>
          ))}
          <div className="relative w-32">
            <span className="pointer-events-none absolute inset-y-0 left-3 flex items-center text-sm text-slate-500">$</span>
            <Input
              id="recharge-amount"
              data-testid="recharge-amount"
              inputMode="decimal"
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              className="pl-6 tabular-nums"
              aria-describedby="recharge-bounds"
              aria-invalid={error !== null && problem(amount) !== null}
            />
          </div>
        </div>
        <p id="recharge-bounds" className="text-xs text-slate-500">
          {t('From {min} to {max}. You pay on Stripe Checkout; the credit appears here once Stripe confirms the payment.', {
            min: formatMoneyText(min),
            max: formatMoneyText(max),
          })}
        </p>
      </div>
      {error && <Alert tone="error">{error}</Alert>}
      <Button type="submit" data-testid="recharge-submit" disabled={busy}>
        {busy ? t('Redirecting to Stripe…') : t('Continue to payment')}
      </Button>
    </form>
  );
}
