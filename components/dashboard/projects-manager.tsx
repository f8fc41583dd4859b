'use client';

import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { ConfirmDialog } from '@/components/ui/dialog';
import { EmptyState } from '@/components/ui/empty-state';
import { Field, Input } from '@/components/ui/input';
import { EditPanel } from '@/components/dashboard/edit-panel';
import { ModelChecklist } from '@/components/dashboard/model-checklist';
import { Progress } from '@/components/ui/progress';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { useApiError, useT } from '@/lib/i18n/client';
import { formatMoneyText } from '@/lib/format';
import type { listProjects } from '@/lib/keys/projects';

// The projects page (docs/decisions/056): each project's monthly budget, spend this month, model
// allowlist and key count; owners and admins create, edit and delete them (the API refuses the others).

export type ProjectJson = Awaited<ReturnType<typeof listProjects>>[number];

interface Values {
  name: string;
  monthly_budget_usd: string;
  models: string[];
}

const EMPTY: Values = { name: '', monthly_budget_usd: '', models: [] };

const bodyOf = (v: Values) => ({ name: v.name.trim(), monthly_budget_usd: v.monthly_budget_usd.trim() || null, models: v.models });

function ProjectFields({
  idPrefix,
  values,
  onChange,
  models,
  errors,
}: {
  idPrefix: string;
  values: Values;
  onChange: (v: Values) => void;
  models: string[];
  errors: Record<string, string>;
}) {
  const t = useT();
  const id = (name: string) => `${idPrefix}-${name}`;
  const set = (patch: Partial<Values>) => onChange({ ...values, ...patch });
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      <Field label={t('Name')} htmlFor={id('name')} error={errors.name}>
        <Input
          id={id('name')}
          data-testid={id('name')}
          aria-invalid={errors.name ? true : undefined}
          aria-describedby={errors.name ? `${id('name')}-error` : undefined}
          maxLength={64}
          value={values.name}
          onChange={(e) => set({ name: e.target.value })}
        />
      </Field>
      <Field label={t('Monthly budget (USD)')} htmlFor={id('monthly')} error={errors.monthly_budget_usd} hint={t('Per calendar month, UTC.')}>
        <Input
          id={id('monthly')}
          data-testid={id('monthly')}
          aria-invalid={errors.monthly_budget_usd ? true : undefined}
          aria-describedby={errors.monthly_budget_usd ? `${id('monthly')}-error` : undefined}
          inputMode="decimal"
          placeholder={t('No limit')}
          value={values.monthly_budget_usd}
          onChange={(e) => set({ monthly_budget_usd: e.target.value })}
        />
      </Field>
      <ModelChecklist
        id={id('models')}
        hint={t("None ticked: every model. A key's own list can only narrow it.")}
        models={models}
        selected={values.models}
        error={errors.models}
        onChange={(selected) => set({ models: selected })}
      />
    </div>
  );
}

export function ProjectsManager({ initial, models }: { initial: ProjectJson[]; models: string[] }) {
  const t = useT();
  const readError = useApiError();
  const [projects, setProjects] = useState(initial);
  const [values, setValues] = useState<Values>(EMPTY);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<{ id: string; values: Values } | null>(null);
  const [editFields, setEditFields] = useState<Record<string, string>>({});
  const [editError, setEditError] = useState<string | null>(null);
  const [toDelete, setToDelete] = useState<ProjectJson | null>(null);

  /** Sends a change; answers the body, or null after showing the error. */
  async function send(url: string, method: string, body: unknown, onError: (text: string, f: Record<string, string>) => void, fallback: string) {
    setBusy(true);
    try {
      const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!res.ok) {
        const { text, fields: f } = await readError(res, fallback);
        onError(res.status === 401 ? t('Your session has expired. Log in again.') : text, f);
        return null;
      }
      return (await res.json()) as unknown;
    } catch {
      onError(t('Network error: the project could not be saved.'), {});
      return null;
    } finally {
      setBusy(false);
    }
  }

  async function reload() {
    const res = await fetch('/api/projects');
    if (res.ok) setProjects(((await res.json()) as { data: ProjectJson[] }).data);
  }

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setFields({});
    const made = await send(
      '/api/projects',
      'POST',
      bodyOf(values),
      (text, f) => {
        setError(text);
        setFields(f);
      },
      t('The project could not be saved.'),
    );
    if (!made) return;
    setValues(EMPTY);
    setProjects((list) => [...list, made as ProjectJson]);
  }

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!editing) return;
    setEditError(null);
    setEditFields({});
    const saved = await send(
      `/api/projects/${encodeURIComponent(editing.id)}`,
      'PATCH',
      bodyOf(editing.values),
      (text, f) => {
        setEditError(text);
        setEditFields(f);
      },
      t('The project could not be saved.'),
    );
    if (!saved) return;
    setEditing(null);
    await reload();
  }

  async function remove() {
    if (!toDelete) return;
    const done = await send(
      `/api/projects/${encodeURIComponent(toDelete.id)}`,
      'DELETE',
      undefined,
      (text) => setError(text),
      t('The project could not be deleted.'),
    );
    setToDelete(null);
    if (done) setProjects((list) => list.filter((p) => p.id !== toDelete.id));
  }

  const usd = (s: string) => formatMoneyText(s, 'USD');
  return (
    <div className="space-y-6">
      <Card>
        <CardHeader title={t('New project')} description={t('Put keys in a project from the keys page; its spend is shown here and on the usage page.')} />
        <CardBody>
          <form onSubmit={create} className="space-y-4" data-testid="new-project-form">
            <ProjectFields idPrefix="new-project" values={values} onChange={setValues} models={models} errors={fields} />
            {error && (
              <Alert tone="error" data-testid="project-error">
                {error}
              </Alert>
            )}
            <Button type="submit" disabled={busy} data-testid="create-project">
              {t('Create project')}
            </Button>
          </form>
        </CardBody>
      </Card>

      {editing && (
        <EditPanel
          testId="edit-project-panel"
          title={t('Edit project')}
          description={t("Changes apply to its keys' next request.")}
          onSubmit={save}
          error={editError}
          errorTestId="edit-project-error"
          saveTestId="save-project"
          saveLabel={t('Save')}
          busy={busy}
          onCancel={() => setEditing(null)}
        >
          <ProjectFields
            idPrefix="edit-project"
            values={editing.values}
            onChange={(v) => setEditing({ ...editing, values: v })}
            models={models}
            errors={editFields}
          />
        </EditPanel>
      )}

      <Card>
        <CardHeader title={t('Projects')} />
        {projects.length === 0 ? (
          <EmptyState title={t('No projects yet')}>{t('Create one above to give a group of keys its own budget and models.')}</EmptyState>
        ) : (
          <Table>
            <THead>
              <tr>
                <Th>{t('Name')}</Th>
                <Th className="hidden md:table-cell">{t('Models')}</Th>
                <Th>{t('This month')}</Th>
                <Th className="hidden sm:table-cell">{t('Keys')}</Th>
                <Th className="text-right">
                  <span className="sr-only">{t('Actions')}</span>
                </Th>
              </tr>
            </THead>
            <TBody>
              {projects.map((p) => (
                <Tr key={p.id} data-testid="project-row">
                  <Td className="font-medium text-slate-900">{p.name}</Td>
                  <Td className="hidden max-w-64 truncate font-mono text-xs md:table-cell">{p.models.length ? p.models.join(', ') : t('All models')}</Td>
                  <Td className="min-w-40 text-xs tabular-nums">
                    {p.monthly_budget_usd ? (
                      <>
                        <div className="flex justify-between gap-2 text-slate-600">
                          <span>
                            {usd(p.spend_this_month_usd)} / {usd(p.monthly_budget_usd)}
                          </span>
                        </div>
                        <Progress value={Number(p.spend_this_month_usd) / Number(p.monthly_budget_usd)} label={t('{label} used', { label: p.name })} />
                      </>
                    ) : (
                      <span className="text-slate-700">{usd(p.spend_this_month_usd)}</span>
                    )}
                  </Td>
                  <Td className="hidden tabular-nums sm:table-cell">{p.keys}</Td>
                  <Td className="text-right">
                    <div className="flex justify-end gap-1">
                      <Button
                        variant="ghost"
                        size="sm"
                        aria-label={t('Edit {name}', { name: p.name })}
                        onClick={() => setEditing({ id: p.id, values: { name: p.name, monthly_budget_usd: p.monthly_budget_usd ?? '', models: p.models } })}
                      >
                        {t('Edit')}
                      </Button>
                      <Button variant="ghost" size="sm" aria-label={t('Delete {name}', { name: p.name })} onClick={() => setToDelete(p)}>
                        {t('Delete')}
                      </Button>
                    </div>
                  </Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        )}
      </Card>

      <ConfirmDialog
        open={toDelete !== null}
        title={t('Delete project “{name}”?', { name: toDelete?.name ?? '' })}
        confirmLabel={t('Delete')}
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setToDelete(null)}
        confirmTestId="confirm-delete-project"
      >
        {t('Its keys stay, outside any project. Its past spend stays in the usage reports.')}
      </ConfirmDialog>
    </div>
  );
}
