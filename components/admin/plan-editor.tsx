'use client';

import { useState } from 'react';
import { useT } from '@/lib/i18n/client';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';

/**
 * Edits one plan as the operator config writes it (JSON here): saved for every instance at once, the
 * server naming every bad field. A new plan starts from `template`.
 */
export function PlanEditor({ id, config, isNew = false }: { id?: string; config: unknown; isNew?: boolean }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const [open, setOpen] = useState(false);
  const [newId, setNewId] = useState('');
  const [text, setText] = useState(() => JSON.stringify(config, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);

  async function save() {
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      setParseError(t('Not valid JSON: {problem}', { problem: (err as Error).message }));
      return;
    }
    setParseError(null);
    const planId = isNew ? newId.trim() : id!;
    if (await send(`/api/admin/plans/${encodeURIComponent(planId)}`, 'PUT', { ...data, id: planId })) setOpen(false);
  }

  if (!open)
    return (
      <Button size="sm" variant={isNew ? 'primary' : 'secondary'} onClick={() => setOpen(true)} data-testid={isNew ? 'new-plan' : `edit-plan-${id}`}>
        {isNew ? t('New plan') : t('Edit')}
      </Button>
    );
  return (
    <div className="w-full space-y-3" data-testid="plan-editor">
      {isNew && (
        <Field label={t('Plan id')} htmlFor="new-plan-id" hint={t('Lower-case letters, digits, - or _.')}>
          <Input id="new-plan-id" value={newId} onChange={(e) => setNewId(e.target.value)} data-testid="new-plan-id" />
        </Field>
      )}
      <Field label={t('Plan (as the operator config writes it)')} htmlFor={`plan-json-${id ?? 'new'}`}>
        <textarea
          id={`plan-json-${id ?? 'new'}`}
          className="block h-72 w-full rounded-md border border-slate-300 bg-white p-2 font-mono text-xs text-slate-900"
          value={text}
          onChange={(e) => setText(e.target.value)}
          spellCheck={false}
          data-testid="plan-json"
        />
      </Field>
      {(parseError || error) && (
        <Alert tone="error" data-testid="plan-error">
          {parseError ?? error}
        </Alert>
      )}
      <div className="flex flex-wrap gap-2">
        <Button size="sm" disabled={busy || (isNew && !newId.trim())} onClick={save} data-testid="save-plan">
          {t('Save plan')}
        </Button>
        <Button size="sm" variant="ghost" onClick={() => setOpen(false)}>
          {t('Cancel')}
        </Button>
      </div>
    </div>
  );
}

/** Retire (stop offering; subscribers keep it), offer again, or drop the console's edits. */
export function PlanStateActions({ id, retired, edited }: { id: string; retired: boolean; edited: boolean }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const url = `/api/admin/plans/${encodeURIComponent(id)}`;
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      {retired ? (
        <Button size="sm" variant="secondary" disabled={busy} onClick={() => send(url, 'POST', { action: 'offer' })} data-testid={`offer-plan-${id}`}>
          {t('Offer again')}
        </Button>
      ) : (
        <Button
          size="sm"
          variant="danger"
          disabled={busy}
          onClick={() =>
            confirm(t('Stop offering this plan? Nobody can subscribe to it or get it by a new code; its subscribers keep it until their period ends.')) &&
            send(url, 'POST', { action: 'retire' })
          }
          data-testid={`retire-plan-${id}`}
        >
          {t('Retire')}
        </Button>
      )}
      {edited && (
        <Button
          size="sm"
          variant="ghost"
          disabled={busy}
          onClick={() =>
            confirm(t('Drop the console’s changes to this plan? The operator config’s version applies again (a plan made here is removed).')) &&
            send(url, 'POST', { action: 'reset' })
          }
          data-testid={`reset-plan-${id}`}
        >
          {t('Reset to config')}
        </Button>
      )}
      {error && <span className="text-xs text-red-700">{error}</span>}
    </span>
  );
}
