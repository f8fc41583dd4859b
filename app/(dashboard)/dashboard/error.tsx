'use client';

import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';

export default function DashboardError({ error, retry }: { error: unknown; retry: () => void }) {
  const digest = error instanceof Error ? (error as Error & { digest?: string }).digest : undefined;
  return (
    <Alert tone="error" title="This page could not be loaded.">
      <p>Try again in a moment.{digest ? ` Reference: ${digest}` : ''}</p>
      <Button variant="secondary" size="sm" className="mt-3" onClick={retry}>
        Try again
      </Button>
    </Alert>
  );
}
