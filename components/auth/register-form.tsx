'use client';

import { ruleProblem } from '@/lib/i18n/translate';
import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent, type ReactNode } from 'react';
import { AuthForm } from '@/components/auth/auth-form';
import { AuthFooterLink } from '@/components/auth/auth-link';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import type { Messages } from '@/lib/i18n/messages';
import { emailProblem, passwordProblem, PASSWORD_MIN_LENGTH } from '@/lib/password-rules';

type Problem = { field: 'email' | 'password' | null; message: ReactNode };

/** `callbackUrl`: where to go once signed up (an invitation link brings its reader back to it). */
export function RegisterForm({ t, callbackUrl = '/dashboard', initialEmail = '' }: { t: Messages['auth']; callbackUrl?: string; initialEmail?: string }) {
  const tr = useT();
  const locale = useLocale();
  const router = useRouter();
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setProblem(null);
    // The server's own rules, checked here first: a refused sign-up still spends the per-IP allowance.
    const badEmail = emailProblem(email);
    if (badEmail) {
      setProblem({ field: 'email', message: ruleProblem(badEmail, tr) });
      return;
    }
    const badPassword = passwordProblem(password);
    if (badPassword) {
      setProblem({ field: 'password', message: ruleProblem(badPassword, tr) });
      return;
    }
    setBusy(true);
    try {
      const res = await fetch('/api/auth/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: email.trim(), password }),
      });
      if (res.status === 201) {
        // The answer set the session cookie.
        router.replace(callbackUrl);
        router.refresh();
        return;
      }
      const body = (await res.json().catch(() => ({}))) as ApiErrorJson;
      const message = apiErrorText(locale, body, res.status, tr('The account could not be created. Try again.'));
      if (res.status === 409 || body.error?.code === 'conflict') {
        setProblem({
          field: 'email',
          message: (
            <>
              {tr('An account with this email already exists.')}{' '}
              <Link href={callbackUrl === '/dashboard' ? '/login' : `/login?callbackUrl=${encodeURIComponent(callbackUrl)}`} className="font-medium underline">
                {tr('Log in instead')}
              </Link>
              .
            </>
          ),
        });
      } else if (res.status === 429) {
        const wait = res.headers.get('retry-after');
        setProblem({
          field: null,
          message: wait
            ? tr('Too many sign-ups from your network. Try again in {n} s.', { n: wait })
            : tr('Too many sign-ups from your network. Try again in a minute.'),
        });
      } else if (res.status === 400) {
        const param = (body.error as { param?: string } | undefined)?.param;
        setProblem({ field: param === 'password' ? 'password' : param === 'email' ? 'email' : null, message });
      } else {
        setProblem({ field: null, message });
      }
    } catch {
      setProblem({ field: null, message: tr('Network error: the account could not be created.') });
    }
    setBusy(false);
  }

  return (
    <AuthForm onSubmit={submit} error={problem?.message} noValidate>
      <Field label={t.email} htmlFor="email">
        <Input
          id="email"
          name="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          aria-invalid={problem?.field === 'email'}
        />
      </Field>
      <Field label={t.password} htmlFor="password" hint={t.passwordHint}>
        <Input
          id="password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={PASSWORD_MIN_LENGTH}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          aria-invalid={problem?.field === 'password'}
        />
      </Field>
      <Button type="submit" className="w-full" disabled={busy} data-testid="register-submit">
        {busy ? t.creatingAccount : t.createAccount}
      </Button>
      <AuthFooterLink href="/login" lead={t.haveAccount}>
        {t.logIn}
      </AuthFooterLink>
    </AuthForm>
  );
}
