'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Button } from '@/components/ui/button';

/**
 * Dismisses one alert (POST /api/alerts/:id/dismiss) and refreshes the page, banner included. Its
 * words come translated from the server: it is on every dashboard page (decision 026).
 */
export function DismissAlertButton({ id, label, ariaLabel }: { id: string; label: string; ariaLabel: string }) {
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
    <Button variant="ghost" size="sm" onClick={dismiss} disabled={busy} data-testid="alert-dismiss" aria-label={ariaLabel}>
      {label}
    </Button>
  );
}
