'use client';

import { useState } from 'react';
import { Button } from '@/components/ui/button';

/**
 * next-auth's own sign-out (its CSRF token, then POST /api/auth/signout), without shipping
 * next-auth/react to every page that has this button (decision 026).
 */
async function signOut(): Promise<void> {
  const { csrfToken } = (await (await fetch('/api/auth/csrf')).json()) as { csrfToken: string };
  await fetch('/api/auth/signout', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-auth-return-redirect': '1' },
    body: new URLSearchParams({ csrfToken, callbackUrl: '/', json: 'true' }),
  });
}

export function SignOutButton({ label = 'Log out', busyLabel = 'Logging out…' }: { label?: string; busyLabel?: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <Button
      variant="ghost"
      size="sm"
      disabled={busy}
      data-testid="sign-out"
      onClick={() => {
        setBusy(true);
        // The page to land on is ours, relative: never an origin the server may have guessed.
        void signOut()
          .catch(() => undefined)
          .then(() => window.location.assign('/'));
      }}
    >
      {busy ? busyLabel : label}
    </Button>
  );
}
