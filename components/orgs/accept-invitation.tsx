'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { useApiError, useT } from '@/lib/i18n/client';
import { Button } from '@/components/ui/button';
import { Alert } from '@/components/ui/alert';

export function AcceptInvitation({ token }: { token: string }) {
  const t = useT();
  const apiError = useApiError();
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="space-y-3">
      {error && (
        <Alert tone="error" data-testid="invite-error">
          {error}
        </Alert>
      )}
      <Button
        className="w-full"
        disabled={busy}
        data-testid="invite-accept"
        onClick={() => {
          setBusy(true);
          setError(null);
          void fetch('/api/invitations/accept', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) }).then(
            async (res) => {
              if (!res.ok) {
                setError((await apiError(res)).text);
                setBusy(false);
                return;
              }
              // Accepting selected the organization: its page shows the new member where they are.
              router.push('/dashboard');
              router.refresh();
            },
          );
        }}
      >
        {t('Accept invitation')}
      </Button>
    </div>
  );
}
