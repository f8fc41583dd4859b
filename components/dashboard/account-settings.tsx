'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { ruleProblem, type Translate } from '@/lib/i18n/translate';
import { useState, type FormEvent } from 'react';
import { passwordProblem, PASSWORD_MIN_LENGTH } from '@/lib/password-rules';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { Field, Input } from '@/components/ui/input';

type Outcome = { tone: 'success' | 'error'; text: string } | null;

async function send(t: Translate, locale: string, method: string, path: string, body?: unknown): Promise<{ ok: boolean; message: string | null }> {
  try {
    const res = await fetch(path, {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.ok) return { ok: true, message: null };
    const data = (await res.json().catch(() => null)) as ApiErrorJson | null;
    return { ok: false, message: apiErrorText(locale, data, res.status, t('The request failed ({status}).', { status: res.status })) };
  } catch {
    return { ok: false, message: t('Network error: nothing was changed.') };
  }
}

function ChangePassword() {
  const t = useT();
  const locale = useLocale();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    const problem = passwordProblem(next);
    if (!current) return setOutcome({ tone: 'error', text: t('Enter your current password.') });
    if (problem) return setOutcome({ tone: 'error', text: ruleProblem(problem, t) });
    setBusy(true);
    const r = await send(t, locale, 'POST', '/api/account/password', { current_password: current, new_password: next });
    setBusy(false);
    if (r.ok) {
      setCurrent('');
      setNext('');
      setOutcome({ tone: 'success', text: t('Password changed. Other sessions have been signed out.') });
    } else setOutcome({ tone: 'error', text: r.message ?? t('The password was not changed.') });
  }
  return (
    <Card>
      <CardHeader title={t('Change password')} description={t('Every other session is signed out when the password changes.')} />
      <CardBody>
        <form onSubmit={submit} className="max-w-sm space-y-4" noValidate>
          {outcome && (
            <Alert tone={outcome.tone} data-testid="password-outcome">
              {outcome.text}
            </Alert>
          )}
          <Field label={t('Current password')} htmlFor="current-password">
            <Input id="current-password" type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} />
          </Field>
          <Field
            label={t('New password')}
            htmlFor="new-password"
            hint={t('At least {n} characters, and not a commonly used password.', { n: PASSWORD_MIN_LENGTH })}
          >
            <Input id="new-password" type="password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} />
          </Field>
          <Button type="submit" disabled={busy} data-testid="change-password">
            {busy ? t('Changing…') : t('Change password')}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

function SignOutEverywhere() {
  const t = useT();
  const locale = useLocale();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Card>
      <CardHeader
        title={t('Sign out everywhere')}
        description={t('Ends every session of this account, on every device, this one included. API keys keep working.')}
      />
      <CardBody className="space-y-3">
        {error && <Alert tone="error">{error}</Alert>}
        <Button
          variant="secondary"
          disabled={busy}
          data-testid="sign-out-everywhere"
          onClick={async () => {
            setBusy(true);
            const r = await send(t, locale, 'POST', '/api/account/sign-out-everywhere');
            if (r.ok) window.location.assign('/login');
            else {
              setBusy(false);
              setError(r.message);
            }
          }}
        >
          {busy ? t('Signing out…') : t('Sign out of all sessions')}
        </Button>
      </CardBody>
    </Card>
  );
}

function DeleteAccount({ email }: { email: string }) {
  const t = useT();
  const locale = useLocale();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ready = password.length > 0 && confirm.trim().toLowerCase() === email.toLowerCase();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!ready) return;
    setBusy(true);
    const r = await send(t, locale, 'DELETE', '/api/account', { password });
    if (r.ok) window.location.assign('/');
    else {
      setBusy(false);
      setError(r.message);
    }
  }
  return (
    <Card className="border-red-200">
      <CardHeader
        title={t('Delete account')}
        description={t(
          'Your keys are revoked at once, your email and password are removed and you are signed out everywhere. The balance is forfeited. Billing records (ledger and request log, without your email) are kept for accounting.',
        )}
      />
      <CardBody>
        <form onSubmit={submit} className="max-w-sm space-y-4" noValidate>
          {error && <Alert tone="error">{error}</Alert>}
          <Field label={t('Password')} htmlFor="delete-password">
            <Input id="delete-password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
          </Field>
          <Field label={t('Type your email ({email}) to confirm', { email })} htmlFor="delete-confirm">
            <Input id="delete-confirm" autoComplete="off" value={confirm} onChange={(e) => setConfirm(e.target.value)} />
          </Field>
          <Button type="submit" variant="danger" disabled={!ready || busy} data-testid="delete-account">
            {busy ? t('Deleting…') : t('Delete my account')}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

export function AccountSettings({ email }: { email: string }) {
  return (
    <div className="space-y-4 sm:space-y-6">
      <ChangePassword />
      <SignOutEverywhere />
      <DeleteAccount email={email} />
    </div>
  );
}
