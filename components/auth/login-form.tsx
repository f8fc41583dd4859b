'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { renderMessage, type CodedMessage } from '@/lib/i18n/codes';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { signIn } from 'next-auth/react';
import { AuthForm } from '@/components/auth/auth-form';
import { AuthFooterLink } from '@/components/auth/auth-link';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import type { Messages } from '@/lib/i18n/messages';

export function LoginForm({ callbackUrl, t }: { callbackUrl: string; t: Messages['auth'] }) {
  const tr = useT();
  const locale = useLocale();
  const router = useRouter();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await signIn('credentials', { redirect: false, email: email.trim(), password });
      if (res?.ok && !res.error) {
        router.replace(callbackUrl);
        router.refresh();
        return;
      }
      if (res?.status === 429) setError(tr('Too many sign-in attempts. Wait a minute, then try again.'));
      // A message of our own (suspended account, too many failed attempts): coded JSON (lib/auth/options.ts).
      else if (res?.error && res.error !== 'CredentialsSignin' && res.error !== 'Configuration')
        setError(ownMessage(res.error, locale, tr('Sign-in failed. Try again in a moment.')));
      else if (res?.error === 'CredentialsSignin' || res?.status === 401) setError(tr('Incorrect email or password.'));
      else setError(tr('Sign-in failed. Try again in a moment.'));
    } catch {
      // next-auth throws when the answer is not its own JSON, e.g. a 429 from a rate limiter in front of it.
      setError(tr('Sign-in failed. If you tried several times, wait a minute before trying again.'));
    }
    setBusy(false);
  }

  return (
    <AuthForm onSubmit={submit} error={error}>
      <Field label={t.email} htmlFor="email">
        <Input id="email" name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <Field
        label={t.password}
        htmlFor="password"
        hint={
          <Link href="/forgot-password" className="font-medium text-indigo-600 hover:text-indigo-500" data-testid="forgot-password">
            {tr('Forgot password?')}
          </Link>
        }
      >
        <Input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </Field>
      <Button type="submit" className="w-full" disabled={busy} data-testid="login-submit">
        {busy ? t.loggingIn : t.logIn}
      </Button>
      <AuthFooterLink href="/register" lead={t.newHere}>
        {t.createAnAccount}
      </AuthFooterLink>
    </AuthForm>
  );
}

/** The sign-in's own refusal in the reader's language: `{message, message_code, params}` JSON, or plain text from an older server. */
function ownMessage(error: string, locale: string, fallback: string): string {
  try {
    const coded = JSON.parse(error) as CodedMessage;
    return renderMessage(locale, coded, fallback);
  } catch {
    return locale === 'zh-CN' ? fallback : error;
  }
}
