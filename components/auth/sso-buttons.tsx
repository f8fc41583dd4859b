'use client';

import { useState } from 'react';
import { signIn } from 'next-auth/react';
import { useT } from '@/lib/i18n/client';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';

/** A button per single sign-on provider the operator configured (docs/decisions/052), under the password form. */
export function SsoButtons({ providers, callbackUrl }: { providers: { id: string; name: string }[]; callbackUrl: string }) {
  const t = useT();
  const [busy, setBusy] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  if (providers.length === 0) return null;

  async function go(id: string) {
    setBusy(id);
    setFailed(false);
    try {
      // next-auth sends the browser on to the provider; it only comes back here when it could not.
      await signIn(id, { callbackUrl });
    } catch {
      setFailed(true);
      setBusy(null);
    }
  }

  return (
    <div className="mt-6" data-testid="sso-providers">
      <div className="relative mb-4 flex items-center" aria-hidden="true">
        <div className="flex-grow border-t border-slate-200" />
        <span className="mx-3 text-xs uppercase tracking-wide text-slate-500">{t('or')}</span>
        <div className="flex-grow border-t border-slate-200" />
      </div>
      <ul className="space-y-2" aria-label={t('Single sign-on')}>
        {providers.map((p) => (
          <li key={p.id}>
            <Button variant="secondary" className="w-full" disabled={busy !== null} onClick={() => void go(p.id)} data-testid={`sso-${p.id}`}>
              {busy === p.id ? t('Redirecting to {name}…', { name: p.name }) : t('Continue with {name}', { name: p.name })}
            </Button>
          </li>
        ))}
      </ul>
      {failed && (
        <Alert tone="error" className="mt-3">
          {t('Sign-in through your identity provider could not start. Try again in a moment.')}
        </Alert>
      )}
    </div>
  );
}
