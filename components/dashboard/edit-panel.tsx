'use client';

import type { FormEvent, ReactNode } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { useT } from '@/lib/i18n/client';

/** The edit card of the keys and projects pages: the fields, the error of the last save, Save and Cancel. */
export function EditPanel({
  testId,
  title,
  description,
  onSubmit,
  error,
  errorTestId,
  saveTestId,
  saveLabel,
  busy,
  onCancel,
  children,
}: {
  testId: string;
  title: string;
  description: string;
  onSubmit: (e: FormEvent) => void;
  error: string | null;
  errorTestId: string;
  saveTestId: string;
  saveLabel: ReactNode;
  busy: boolean;
  onCancel: () => void;
  children: ReactNode;
}) {
  const t = useT();
  return (
    <Card data-testid={testId}>
      <CardHeader title={title} description={description} />
      <CardBody>
        <form onSubmit={onSubmit} className="space-y-4">
          {children}
          {error && (
            <Alert tone="error" data-testid={errorTestId}>
              {error}
            </Alert>
          )}
          <div className="flex gap-2">
            <Button type="submit" disabled={busy} data-testid={saveTestId}>
              {saveLabel}
            </Button>
            <Button variant="secondary" onClick={onCancel}>
              {t('Cancel')}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
