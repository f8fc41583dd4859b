'use client';

// Subscribe to a plan (Stripe Checkout, or the price change of a running subscription) and open
// Stripe's billing portal: one button each, the answer's URL followed (docs/decisions/048).
import { useState } from 'react';
import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { Button } from '@/components/ui/button';

export function PlanBillingButton({ action, plan, variant = 'primary' }: { action: 'subscribe' | 'portal'; plan?: string; variant?: 'primary' | 'secondary' }) {
  const t = useT();
  const locale = useLocale();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function go() {
    setBusy(true);
    setError(null);
    try {
      const res = await fetch(action === 'subscribe' ? '/api/plan/checkout' : '/api/plan/portal', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(action === 'subscribe' ? { plan } : {}),
      });
      const body = (await res.json().catch(() => ({}))) as { url?: string } & ApiErrorJson;
      if (res.ok && body.url) {
        window.location.assign(body.url);
        return;
      }
      setError(
        res.status === 401
          ? t('Your session has expired. Log in again.')
          : apiErrorText(locale, body, res.status, t('The payment could not be started. Try again.')),
      );
    } catch {
      setError(t('Network error: the payment could not be started.'));
    }
    setBusy(false);
  }

  return (
    <span className="inline-flex flex-col items-start gap-1">
      <Button size="sm" variant={variant} onClick={go} disabled={busy} data-testid={action === 'subscribe' ? `plan-subscribe-${plan}` : 'plan-manage-billing'}>
        {action === 'subscribe' ? t('Subscribe') : t('Manage billing')}
      </Button>
      {error && (
        <span role="alert" className="text-xs text-red-700">
          {error}
        </span>
      )}
    </span>
  );
}
