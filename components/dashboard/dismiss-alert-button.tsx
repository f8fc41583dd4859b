'use client';

import { useT } from '@/lib/i18n/client';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Button } from '@/components/ui/button';

/** Dismisses one alert (POST /api/alerts/:id/dismiss) and refreshes the page, banner included. */
export function DismissAlertButton({ id }: { id: string }) {
  const t = useT();
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  async function dismiss() {
    setBusy(true);
    try {
      const res = await fetch(`/api/alerts/${encodeURIComponent(id)}/dismiss`, { method: 'POST' });
      if (res.ok) router.refresh();
    } finally {
      setBusy(false);
    }
  }
  return (
    <Button variant="ghost" size="sm" onClick={dismiss} disabled={busy} data-testid="alert-dismiss" aria-label={t('Dismiss alert')}>
      {t('Dismiss')}
    </Button>
  );
}
