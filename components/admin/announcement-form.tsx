'use client';

import { useT } from '@/lib/i18n/client';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';

export function AnnouncementForm({ current }: { current: string | null }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const [message, setMessage] = useState('');
  const [level, setLevel] = useState('info');

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (await send('/api/admin/announcements', 'POST', { message, level })) setMessage('');
  }

  return (
    <form onSubmit={submit} className="space-y-3">
      {error && <Alert tone="error">{error}</Alert>}
      <div className="grid gap-3 sm:grid-cols-[1fr_10rem]">
        <Field label={t('Message')} htmlFor="announcement-message">
          <Input
            id="announcement-message"
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            maxLength={1000}
            placeholder={t('Maintenance on Sunday 02:00-03:00 UTC')}
            data-testid="announcement-message"
            required
          />
        </Field>
        <Field label={t('Level')} htmlFor="announcement-level">
          <Select id="announcement-level" value={level} onChange={(e) => setLevel(e.target.value)}>
            <option value="info">{t('info')}</option>
            <option value="warning">{t('warning')}</option>
          </Select>
        </Field>
      </div>
      <div className="flex gap-2">
        <Button type="submit" disabled={busy || !message.trim()} data-testid="post-announcement">
          {t('Publish')}
        </Button>
        {current && (
          <Button variant="secondary" disabled={busy} onClick={() => send('/api/admin/announcements', 'DELETE')} data-testid="clear-announcement">
            {t('Take down')}
          </Button>
        )}
      </div>
    </form>
  );
}
