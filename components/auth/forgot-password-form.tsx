'use client';

import { useT } from '@/lib/i18n/client';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import { AuthForm, useAuthRequest } from '@/components/auth/auth-form';
import { AuthFooterLink } from '@/components/auth/auth-link';
import { emailProblem } from '@/lib/password-rules';

/** Asks for a reset link. The answer never says whether the address has an account. */
export function ForgotPasswordForm() {
  const t = useT();
  const { busy, error, send } = useAuthRequest();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const ok = await send({
      problem: emailProblem(email),
      url: '/api/auth/password-reset',
      body: { email: email.trim() },
      accepted: (res) => res.status === 202,
      fallback: t('The link could not be requested. Try again.'),
    });
    if (ok) setSent(email.trim());
  }

  if (sent)
    return (
      <div className="space-y-4">
        <Alert tone="success" data-testid="reset-requested">
          {t('If an account uses {email}, a link to set a new password is on its way. It works for 1 hour, once.', { email: sent })}
        </Alert>
        <p className="text-sm text-slate-600">{t('Nothing after a few minutes? Check the spam folder, or ask again.')}</p>
        <AuthFooterLink href="/login">{t('Back to log in')}</AuthFooterLink>
      </div>
    );

  return (
    <AuthForm onSubmit={submit} error={error} noValidate>
      <Field label={t('Email')} htmlFor="email">
        <Input id="email" name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <Button type="submit" className="w-full" disabled={busy} data-testid="reset-request-submit">
        {busy ? t('Sending…') : t('Send the link')}
      </Button>
      <AuthFooterLink href="/login">{t('Back to log in')}</AuthFooterLink>
    </AuthForm>
  );
}
