'use client';

import { useT } from '@/lib/i18n/client';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import { AuthForm, useAuthRequest } from '@/components/auth/auth-form';
import { passwordProblem, PASSWORD_MIN_LENGTH } from '@/lib/password-rules';

/** Sets the new password with the link's token; then on to log in. */
export function ResetPasswordForm({ token, email }: { token: string; email: string }) {
  const t = useT();
  const router = useRouter();
  const { busy, error, send } = useAuthRequest();
  const [password, setPassword] = useState('');

  async function submit(e: FormEvent) {
    e.preventDefault();
    const ok = await send({
      problem: passwordProblem(password),
      url: '/api/auth/password-reset/confirm',
      body: { token, password },
      accepted: (res) => res.ok,
      fallback: t('The password could not be set. Try again.'),
    });
    if (ok) router.replace('/login?reset=done');
  }

  return (
    <AuthForm onSubmit={submit} error={error} noValidate>
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
    </AuthForm>
  );
}
