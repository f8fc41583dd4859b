'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { ruleProblem } from '@/lib/i18n/translate';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import { passwordProblem, PASSWORD_MIN_LENGTH } from '@/lib/auth/password-rules';

/** Sets the new password with the link's token; then on to log in. */
export function ResetPasswordForm({ token, email }: { token: string; email: string }) {
  const t = useT();
  const locale = useLocale();
  const router = useRouter();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const bad = passwordProblem(password);
    if (bad) {
      setError(ruleProblem(bad, t));
      return;
    }
    setBusy(true);
    try {
      const res = await fetch('/api/auth/password-reset/confirm', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, password }),
      });
      if (res.ok) {
        router.replace('/login?reset=done');
        return;
      }
      const body = (await res.json().catch(() => ({}))) as ApiErrorJson;
      setError(apiErrorText(locale, body, res.status, t('The password could not be set. Try again.')));
    } catch {
      setError(t('The password could not be set. Try again.'));
    }
    setBusy(false);
  }

  return (
    <form onSubmit={submit} className="space-y-4" noValidate>
      {error && (
        <Alert tone="error" data-testid="auth-error">
          {error}
        </Alert>
      )}
      {/* For password managers: which account this password belongs to. */}
      <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
      <Field
        label={t('New password')}
        htmlFor="new-password"
        hint={t('At least {n} characters, and not a commonly used password.', { n: PASSWORD_MIN_LENGTH })}
      >
        <Input
          id="new-password"
          name="new-password"
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </Field>
      <Button type="submit" className="w-full" disabled={busy} data-testid="reset-submit">
        {busy ? t('Saving…') : t('Set the new password')}
      </Button>
    </form>
  );
}
