'use client';

import { useState, type FormEvent } from 'react';
import { LocalTime } from '@/components/ui/local-time';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EditPanel } from '@/components/dashboard/edit-panel';
import { CopyButton } from '@/components/ui/copy-button';
import { ConfirmDialog } from '@/components/ui/dialog';
import { EmptyState } from '@/components/ui/empty-state';
import { FieldError, Input, Label } from '@/components/ui/input';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { useApiError, useLocale, useT } from '@/lib/i18n/client';
import { formErrors } from '@/lib/schemas/fields';
import { keyCreate, keyUpdate } from '@/lib/schemas/keys';
import { KeySnippets } from '@/components/dashboard/key-snippets';
import {
  bodyOf,
  controlsSummary,
  EMPTY_CONTROLS,
  KeyControlsFields,
  KeySpend,
  valuesOf,
  type BudgetGauge,
  type ControlValues,
  type KeyWithControlsJson,
  type ProjectOption,
} from '@/components/dashboard/key-controls-form';

export type ApiKeyJson = KeyWithControlsJson;
type CreatedKey = ApiKeyJson & { key: string };

export function KeysManager({
  initialKeys,
  models = [],
  baseUrl = '',
  sampleModel = 'gpt-4o-mini',
  budgetGauge,
  projects = [],
}: {
  initialKeys: ApiKeyJson[];
  models?: string[];
  baseUrl?: string;
  sampleModel?: string;
  budgetGauge?: BudgetGauge;
  /** The account's projects, for the key form's project select (docs/decisions/056). */
  projects?: ProjectOption[];
}) {
  const t = useT();
  const readError = useApiError();
  const locale = useLocale();
  /** The error's text, and its bad fields beside them (`setFields`). */
  const errorOf = async (res: Response, fallback: string, setFields: (f: Record<string, string>) => void) => {
    if (res.status === 401) return t('Your session has expired. Log in again.');
    const { text, fields } = await readError(res, fallback);
    setFields(fields);
    return text;
  };
  const [keys, setKeys] = useState(initialKeys);
  const projectNames = new Map(projects.map((p) => [p.id, p.name]));
  const [createFields, setCreateFields] = useState<Record<string, string>>({});
  const [editFields, setEditFields] = useState<Record<string, string>>({});
  const [name, setName] = useState('');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [toRevoke, setToRevoke] = useState<ApiKeyJson | null>(null);
  const [revoking, setRevoking] = useState(false);
  const [controls, setControls] = useState<ControlValues>(EMPTY_CONTROLS);
  const [editing, setEditing] = useState<{ key: ApiKeyJson; values: ControlValues } | null>(null);
  const [saving, setSaving] = useState(false);
  const [editError, setEditError] = useState<string | null>(null);

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!editing) return;
    setSaving(true);
    setEditError(null);
    setEditFields({});
    // The route's own schema first: what it refuses is said at once, in the same words.
    const body = bodyOf(editing.values);
    const bad = formErrors(locale, keyUpdate, body);
    if (bad) {
      setEditFields(bad.fields);
      setEditError(bad.text);
      setSaving(false);
      return;
    }
    try {
      const res = await fetch(`/api/keys/${encodeURIComponent(editing.key.id)}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) {
        setEditError(await errorOf(res, t('The key could not be saved.'), setEditFields));
        return;
      }
      const updated = (await res.json()) as ApiKeyJson;
      setKeys((list) => list.map((k) => (k.id === updated.id ? updated : k)));
      setEditing(null);
    } catch {
      setEditError(t('Network error: the key could not be saved.'));
    } finally {
      setSaving(false);
    }
  }

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setCreateFields({});
    setCreated(null);
    const body = { name: name.trim(), ...bodyOf(controls) };
    const bad = formErrors(locale, keyCreate, body);
    if (bad) {
      setCreateFields(bad.fields);
      setError(bad.text);
      return;
    }
    setCreating(true);
    try {
      const res = await fetch('/api/keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) {
        setError(await errorOf(res, t('The key could not be created.'), setCreateFields));
        return;
      }
      const key = (await res.json()) as CreatedKey;
      setCreated(key);
      setName('');
      setControls(EMPTY_CONTROLS);
      const { key: _secret, ...listed } = key;
      setKeys((list) => [listed, ...list]);
    } catch {
      setError(t('Network error: the key could not be created.'));
    } finally {
      setCreating(false);
    }
  }

  async function revoke() {
    if (!toRevoke) return;
    setRevoking(true);
    setError(null);
    try {
      const res = await fetch(`/api/keys/${encodeURIComponent(toRevoke.id)}`, { method: 'DELETE' });
      if (!res.ok) {
        setError(await errorOf(res, t('The key could not be revoked.'), () => undefined));
      } else {
        const updated = (await res.json()) as ApiKeyJson;
        setKeys((list) => list.map((k) => (k.id === updated.id ? updated : k)));
        if (created?.id === updated.id) setCreated(null);
      }
    } catch {
      setError(t('Network error: the key could not be revoked.'));
    } finally {
      setRevoking(false);
      setToRevoke(null);
    }
  }

  const active = keys.filter((k) => !k.revoked).length;

  return (
    <div className="space-y-4 sm:space-y-6">
      <Card>
        <CardHeader title={t('Create a key')} description={t('Use one key per app or environment, so you can revoke one without touching the others.')} />
        <CardBody>
          <form onSubmit={create} className="flex flex-col gap-3 sm:flex-row sm:flex-wrap sm:items-end">
            <div className="flex-1 space-y-1.5">
              <Label htmlFor="key-name">{t('Name')}</Label>
              <Input
                id="key-name"
                data-testid="key-name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                placeholder={t('e.g. production, laptop, ci')}
                maxLength={64}
                required
                autoComplete="off"
                aria-invalid={createFields.name ? true : undefined}
                aria-describedby={createFields.name ? 'key-name-error' : undefined}
              />
              <FieldError id="key-name" error={createFields.name} />
            </div>
            <Button type="submit" data-testid="create-key" disabled={creating || !name.trim()}>
              {creating ? t('Creating…') : t('Create key')}
            </Button>
            <details className="w-full" data-testid="new-controls" open={Object.keys(createFields).some((f) => f !== 'name') || undefined}>
              <summary className="cursor-pointer text-sm font-medium text-indigo-700">{t('Limits and restrictions (optional)')}</summary>
              <div className="mt-3">
                <KeyControlsFields
                  idPrefix="new"
                  values={controls}
                  onChange={setControls}
                  models={models}
                  gauge={budgetGauge}
                  errors={createFields}
                  projects={projects}
                />
              </div>
            </details>
          </form>
          {error && (
            <Alert tone="error" className="mt-3" data-testid="create-error">
              {error}
            </Alert>
          )}
        </CardBody>
      </Card>

      {created && (
        <section aria-labelledby="new-key-title" className="rounded-lg border border-amber-300 bg-amber-50 p-4 sm:p-5" data-testid="new-key-panel">
          <h2 id="new-key-title" className="text-sm font-semibold text-amber-950">
            {t('Copy your new key “{name}” now', { name: created.name })}
          </h2>
          <p className="mt-1 text-sm text-amber-900">
            {t('This is the only time the full key is shown: we store only a hash of it. If you lose it, revoke it and create another.')}
          </p>
          <div className="mt-3 flex flex-col gap-2 sm:flex-row sm:items-center">
            <code
              data-testid="new-key"
              className="block min-w-0 flex-1 select-all break-all rounded-md border border-amber-200 bg-white px-3 py-2 font-mono text-sm text-slate-900"
            >
              {created.key}
            </code>
            <div className="flex gap-2">
              <CopyButton value={created.key} label={t('Copy key')} variant="primary" size="md" />
              <Button variant="secondary" onClick={() => setCreated(null)}>
                {t('Done')}
              </Button>
            </div>
          </div>
          {baseUrl && <KeySnippets baseUrl={baseUrl} apiKey={created.key} model={sampleModel} />}
        </section>
      )}

      <Card>
        <CardHeader title={t('Your keys')} description={t('{active} active · {revoked} revoked', { active, revoked: keys.length - active })} />
        {keys.length === 0 ? (
          <EmptyState title={t('No keys yet')}>{t('Create a key above, then send it as a Bearer token.')}</EmptyState>
        ) : (
          <Table>
            <THead>
              <tr>
                <Th>{t('Name')}</Th>
                <Th className="hidden sm:table-cell">{t('Key')}</Th>
                <Th className="hidden md:table-cell">{t('Created')}</Th>
                <Th className="hidden lg:table-cell">{t('Last used')}</Th>
                <Th className="hidden md:table-cell">{t('Limits')}</Th>
                <Th>{t('Spend')}</Th>
                <Th>{t('Status')}</Th>
                <Th className="text-right">
                  <span className="sr-only">{t('Actions')}</span>
                </Th>
              </tr>
            </THead>
            <TBody>
              {keys.map((k) => (
                <Tr key={k.id} data-testid="key-row" data-key-id={k.id} className={k.revoked ? 'text-slate-500' : undefined}>
                  <Td className="max-w-[11rem] break-words font-medium text-slate-900 sm:max-w-none">
                    {k.name}
                    <div className="mt-0.5 font-mono text-xs font-normal text-slate-600 sm:hidden">{k.display}</div>
                  </Td>
                  <Td className="hidden whitespace-nowrap font-mono text-xs sm:table-cell">{k.display}</Td>
                  <Td className="hidden whitespace-nowrap tabular-nums md:table-cell">
                    <LocalTime iso={k.created_at} />
                  </Td>
                  <Td className="hidden whitespace-nowrap tabular-nums lg:table-cell">
                    {k.last_used_at ? <LocalTime iso={k.last_used_at} /> : <span className="text-slate-500">{t('Never')}</span>}
                  </Td>
                  <Td className="hidden text-xs text-slate-600 md:table-cell" data-testid="key-limits">
                    {[...(k.project_id ? [t('project {name}', { name: projectNames.get(k.project_id) ?? '?' })] : []), ...controlsSummary(k, t)].join(
                      ' · ',
                    ) || <span className="text-slate-500">{t('None')}</span>}
                  </Td>
                  <Td>
                    <KeySpend k={k} />
                  </Td>
                  <Td>
                    {k.revoked ? (
                      <Badge tone="neutral" data-testid="key-status">
                        {t('Revoked')}
                      </Badge>
                    ) : k.expired ? (
                      <Badge tone="neutral" data-testid="key-status">
                        {t('Expired')}
                      </Badge>
                    ) : (
                      <Badge tone="green" data-testid="key-status">
                        {t('Active')}
                      </Badge>
                    )}
                  </Td>
                  <Td className="whitespace-nowrap text-right">
                    {!k.revoked && (
                      <Button
                        variant="secondary"
                        size="sm"
                        className="mr-2"
                        data-testid="edit-key"
                        aria-label={t('Edit key {name}', { name: k.name })}
                        onClick={() => {
                          setEditError(null);
                          setEditFields({});
                          setEditing({ key: k, values: valuesOf(k) });
                        }}
                      >
                        {t('Edit')}
                      </Button>
                    )}
                    {!k.revoked && (
                      <Button
                        variant="secondary"
                        size="sm"
                        data-testid="revoke-key"
                        aria-label={t('Revoke key {name}', { name: k.name })}
                        onClick={() => setToRevoke(k)}
                      >
                        {t('Revoke')}
                      </Button>
                    )}
                  </Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>

      {editing && (
        <EditPanel
          testId="edit-key-panel"
          title={t('Limits of “{name}”', { name: editing.key.name })}
          description={t("Changes apply to the key's next request, on every server.")}
          onSubmit={save}
          error={editError}
          errorTestId="edit-error"
          saveTestId="save-key"
          saveLabel={saving ? t('Saving…') : t('Save')}
          busy={saving}
          onCancel={() => setEditing(null)}
        >
          <KeyControlsFields
            idPrefix="edit"
            values={editing.values}
            onChange={(values) => setEditing({ ...editing, values })}
            models={models}
            gauge={budgetGauge}
            errors={editFields}
            projects={projects}
          />
        </EditPanel>
      )}

      <ConfirmDialog
        open={toRevoke !== null}
        title={t('Revoke “{name}”?', { name: toRevoke?.name ?? '' })}
        confirmLabel={t('Revoke key')}
        confirmTestId="confirm-revoke"
        busy={revoking}
        onConfirm={revoke}
        onCancel={() => setToRevoke(null)}
      >
        {t('Requests with {key} will be refused with 401 right away. This cannot be undone.', { key: toRevoke?.display ?? '' })}
      </ConfirmDialog>
    </div>
  );
}
