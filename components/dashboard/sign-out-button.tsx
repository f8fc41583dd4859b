'use client';

import { useState } from 'react';
import { signOut } from 'next-auth/react';
import { Button } from '@/components/ui/button';

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
        void signOut({ redirect: false })
          .catch(() => undefined)
          .then(() => window.location.assign('/'));
      }}
    >
      {busy ? busyLabel : label}
    </Button>
  );
}
