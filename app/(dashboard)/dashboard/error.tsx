'use client';

import { useT } from '@/lib/i18n/client';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';

export default function DashboardError({ error, retry }: { error: unknown; retry: () => void }) {
  const t = useT();
  const digest = error instanceof Error ? (error as Error & { digest?: string }).digest : undefined;
  return (
    <Alert tone="error" title={t('This page could not be loaded.')}>
      <p>
        {t('Try again in a moment.')}
        {digest ? t(' Reference: {digest}', { digest }) : ''}
      </p>
      <Button variant="secondary" size="sm" className="mt-3" onClick={retry}>
        {t('Try again')}
      </Button>
    </Alert>
  );
}
