'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { useState } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';

/** Shown while the person's email is not verified and the operator requires it: why paying waits, and "resend". */
export function VerifyEmailBanner({ email }: { email: string }) {
  const t = useT();
  const locale = useLocale();
  const [state, setState] = useState<'idle' | 'busy' | 'sent' | 'verified'>('idle');
  const [error, setError] = useState<string | null>(null);

  async function resend() {
    setState('busy');
    setError(null);
    try {
      const res = await fetch('/api/account/verify-email', { method: 'POST' });
      const body = (await res.json().catch(() => ({}))) as ApiErrorJson & { verified?: boolean };
      if (res.ok) {
        setState(body.verified ? 'verified' : 'sent');
        return;
      }
      setError(apiErrorText(locale, body, res.status, t('The mail could not be sent. Try again in a few minutes.')));
    } catch {
      setError(t('The mail could not be sent. Try again in a few minutes.'));
    }
    setState('idle');
  }

  return (
    <Alert tone="warning" className="mb-4" title={t('Verify your email address')} data-testid="verify-email-banner">
      <p>{t('Redeeming codes, recharging and buying plans wait until you open the link we mailed to {email}.', { email })}</p>
      <div className="mt-3 flex flex-wrap items-center gap-3">
        <Button type="button" variant="secondary" onClick={resend} disabled={state === 'busy'} data-testid="verify-email-resend">
          {state === 'busy' ? t('Sending…') : t('Send the link again')}
        </Button>
        <span className="text-sm">
          {state === 'sent' && t('Sent. Check your inbox (and the spam folder).')}
          {state === 'verified' && t('Your email is already verified. Reload the page.')}
          {error}
        </span>
      </div>
    </Alert>
  );
}
