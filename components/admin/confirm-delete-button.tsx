'use client';

import { Button } from '@/components/ui/button';
import { useAdminAction } from './use-admin-action';

/** A small danger button that asks first, then DELETEs `url` and shows the refusal beside it. */
export function ConfirmDeleteButton({ url, question, label, testId }: { url: string; question: string; label: string; testId: string }) {
  const { busy, error, send } = useAdminAction();
  return (
    <span className="inline-flex items-center gap-2">
      <Button size="sm" variant="danger" disabled={busy} onClick={() => confirm(question) && send(url, 'DELETE')} data-testid={testId}>
        {label}
      </Button>
      {error && <span className="text-xs text-red-700">{error}</span>}
    </span>
  );
}
