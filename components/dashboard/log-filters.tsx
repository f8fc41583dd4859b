'use client';

import { useT } from '@/lib/i18n/client';
import type { Phrase } from '@/lib/i18n/translate';
import { useRouter } from 'next/navigation';
import { useTransition } from 'react';
import { buttonClass } from '@/components/ui/button';
import { Input, Label, Select } from '@/components/ui/input';

export interface LogFilterValues {
  key: string;
  model: string;
  status: string;
  from: string;
  to: string;
}

const statuses: { value: string; label: Phrase }[] = [
  { value: '', label: 'Any status' },
  { value: 'ok', label: 'Succeeded' },
  { value: 'error', label: 'Failed (any error)' },
  { value: 'client_closed', label: 'Client closed' },
  { value: '4xx', label: '4xx' },
  { value: '5xx', label: '5xx' },
  { value: '402', label: '402 insufficient balance' },
  { value: '429', label: '429 rate limited' },
  { value: '502', label: '502 upstream failed' },
];

/** The same download as JSON Lines (one request per line, totals last). */
const jsonlHref = (href: string) => `${href}${href.includes('?') ? '&' : '?'}format=jsonl`;

/** Filters apply as soon as they change; the URL holds them, so the view can be shared and reloaded. */
export function LogFilters({
  values,
  keys,
  models,
  exportHref,
}: {
  values: LogFilterValues;
  keys: { id: string; name: string; revoked: boolean }[];
  models: string[];
  exportHref: string;
}) {
  const t = useT();
  const router = useRouter();
  const [pending, startTransition] = useTransition();

  function apply(change: Partial<LogFilterValues>) {
    const next = { ...values, ...change };
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value) query.set(name, value);
    // Days are the viewer's own (the zone the page's times are shown in), not UTC days.
    if (next.from || next.to) query.set('tz', Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
    const qs = query.toString();
    startTransition(() => router.push(qs ? `/dashboard/logs?${qs}` : '/dashboard/logs'));
  }

  const statusOptions = statuses.some((s) => s.value === values.status)
    ? statuses.map((s) => ({ value: s.value, label: t(s.label) }))
    : [...statuses.map((s) => ({ value: s.value, label: t(s.label) })), { value: values.status, label: values.status }];
  const modelOptions = values.model && !models.includes(values.model) ? [values.model, ...models] : models;
  const anyFilter = Object.values(values).some(Boolean);

  return (
    <div className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:flex lg:items-end" aria-busy={pending}>
      <div className="space-y-1 lg:w-44">
        <Label htmlFor="filter-key" className="text-xs text-slate-500">
          {t('Key')}
        </Label>
        <Select id="filter-key" data-testid="filter-key" value={values.key} onChange={(e) => apply({ key: e.target.value })}>
          <option value="">{t('All keys')}</option>
          {keys.map((k) => (
            <option key={k.id} value={k.id}>
              {k.name}
              {k.revoked ? t(' (revoked)') : ''}
            </option>
          ))}
        </Select>
      </div>
      <div className="space-y-1 lg:w-48">
        <Label htmlFor="filter-model" className="text-xs text-slate-500">
          {t('Model')}
        </Label>
        <Select id="filter-model" data-testid="filter-model" value={values.model} onChange={(e) => apply({ model: e.target.value })}>
          <option value="">{t('All models')}</option>
          {modelOptions.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </Select>
      </div>
      <div className="space-y-1 lg:w-48">
        <Label htmlFor="filter-status" className="text-xs text-slate-500">
          {t('Status')}
        </Label>
        <Select id="filter-status" data-testid="filter-status" value={values.status} onChange={(e) => apply({ status: e.target.value })}>
          {statusOptions.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </Select>
      </div>
      <div className="space-y-1 lg:w-40">
        <Label htmlFor="filter-from" className="text-xs text-slate-500">
          {t('From')}
        </Label>
        <Input
          id="filter-from"
          data-testid="filter-from"
          type="date"
          value={values.from}
          max={values.to || undefined}
          onChange={(e) => apply({ from: e.target.value })}
        />
      </div>
      <div className="space-y-1 lg:w-40">
        <Label htmlFor="filter-to" className="text-xs text-slate-500">
          {t('To')}
        </Label>
        <Input
          id="filter-to"
          data-testid="filter-to"
          type="date"
          value={values.to}
          min={values.from || undefined}
          onChange={(e) => apply({ to: e.target.value })}
        />
      </div>
      <div className="col-span-2 flex items-center gap-2 sm:col-span-1 lg:ml-auto">
        {anyFilter && (
          <button type="button" className={buttonClass({ variant: 'ghost' })} onClick={() => apply({ key: '', model: '', status: '', from: '', to: '' })}>
            {t('Clear')}
          </button>
        )}
        <a href={exportHref} download className={buttonClass({ variant: 'secondary' })} data-testid="export-csv">
          {t('Export CSV')}
        </a>
        <a href={jsonlHref(exportHref)} download className={buttonClass({ variant: 'secondary' })} data-testid="export-jsonl">
          {t('Export JSONL')}
        </a>
      </div>
      {pending && (
        <span className="col-span-full text-xs text-slate-500" role="status">
          {t('Loading…')}
        </span>
      )}
    </div>
  );
}
