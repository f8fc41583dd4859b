'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { ruleProblem } from '@/lib/i18n/translate';
import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import { emailProblem } from '@/lib/auth/password-rules';

/** Asks for a reset link. The answer never says whether the address has an account. */
export function ForgotPasswordForm() {
  const t = useT();
  const locale = useLocale();
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const bad = emailProblem(email);
    if (bad) {
      setError(ruleProblem(bad, t));
      return;
    }
    setBusy(true);
    try {
      const res = await fetch('/api/auth/password-reset', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: email.trim() }),
      });
      if (res.status === 202) setSent(email.trim());
      else {
        const body = (await res.json().catch(() => ({}))) as ApiErrorJson;
        setError(apiErrorText(locale, body, res.status, t('The link could not be requested. Try again.')));
      }
    } catch {
      setError(t('The link could not be requested. Try again.'));
    }
    setBusy(false);
  }

  if (sent)
    return (
      <div className="space-y-4">
        <Alert tone="success" data-testid="reset-requested">
          {t('If an account uses {email}, a link to set a new password is on its way. It works for 1 hour, once.', { email: sent })}
        </Alert>
        <p className="text-sm text-slate-600">{t('Nothing after a few minutes? Check the spam folder, or ask again.')}</p>
        <p className="text-center text-sm">
          <Link href="/login" className="font-medium text-indigo-600 hover:text-indigo-500">
            {t('Back to log in')}
          </Link>
        </p>
      </div>
    );

  return (
    <form onSubmit={submit} className="space-y-4" noValidate>
      {error && (
        <Alert tone="error" data-testid="auth-error">
          {error}
        </Alert>
      )}
      <Field label={t('Email')} htmlFor="email">
        <Input id="email" name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <Button type="submit" className="w-full" disabled={busy} data-testid="reset-request-submit">
        {busy ? t('Sending…') : t('Send the link')}
      </Button>
      <p className="text-center text-sm">
        <Link href="/login" className="font-medium text-indigo-600 hover:text-indigo-500">
          {t('Back to log in')}
        </Link>
      </p>
    </form>
  );
}
