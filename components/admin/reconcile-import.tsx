'use client';

import { useState, type ChangeEvent, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { formatCount } from '@/lib/format';

interface Classes {
  uncached_input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
}

interface Result {
  format: string;
  differing: number;
  rows: { day: string; model: string; matches: boolean; recorded: Classes; provider: Classes; difference: Classes }[];
}

const CLASSES = ['uncached_input_tokens', 'cache_read_tokens', 'cache_write_tokens', 'output_tokens'] as const;

/** The console's import of a provider's usage export: sent to POST /api/admin/reconciliation, its differences shown per day and model. */
export function ReconcileImport({ channels }: { channels: string[] }) {
  const t = useT();
  const locale = useLocale();
  const [csv, setCsv] = useState('');
  const [channel, setChannel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const labels: Record<(typeof CLASSES)[number], string> = {
    uncached_input_tokens: t('Uncached input'),
    cache_read_tokens: t('Cache read'),
    cache_write_tokens: t('Cache write'),
    output_tokens: t('Output'),
  };

  async function onFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (file) setCsv(await file.text());
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const res = await fetch('/api/admin/reconciliation', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ csv, channel: channel || undefined }),
      });
      const data = (await res.json().catch(() => ({}))) as Result & ApiErrorJson;
      if (!res.ok) setError(apiErrorText(locale, data, res.status, t('Request failed (HTTP {status}).', { status: res.status })));
      else setResult(data);
    } catch {
      setError(t('Network error: try again.'));
    } finally {
      setBusy(false);
    }
  }

  const n = (v: number) => formatCount(v);
  return (
    <div className="space-y-4">
      <form onSubmit={submit} className="space-y-3">
        <Field label={t('Usage CSV')} htmlFor="reconcile-csv-text">
          <textarea
            id="reconcile-csv-text"
            value={csv}
            onChange={(e) => setCsv(e.target.value)}
            rows={5}
            className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-xs text-slate-900 shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/20"
            data-testid="reconcile-csv-text"
          />
        </Field>
        <div className="grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end">
          <Field label={t('CSV file')} htmlFor="reconcile-file">
            <Input id="reconcile-file" type="file" accept=".csv,text/csv" onChange={onFile} className="py-1.5" />
          </Field>
          <Field label={t('Channels compared')} htmlFor="reconcile-channel">
            <Select id="reconcile-channel" value={channel} onChange={(e) => setChannel(e.target.value)}>
              <option value="">{t('All channels of the export’s provider')}</option>
              {channels.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </Select>
          </Field>
          <Button type="submit" disabled={busy || csv.trim() === ''} data-testid="reconcile-compare">
            {busy ? t('Comparing') : t('Compare')}
          </Button>
        </div>
      </form>
      {error && (
        <Alert tone="error" data-testid="reconcile-error">
          {error}
        </Alert>
      )}
      {result && (
        <div className="space-y-3" data-testid="reconcile-result">
          <p className="text-sm text-slate-700">
            {t('Detected format: {format}', { format: result.format === 'openai' ? 'OpenAI' : 'Anthropic' })} ·{' '}
            {result.differing === 0
              ? t('Every day and model matches.')
              : t('{n} of {total} day-and-model rows differ.', { n: result.differing, total: result.rows.length })}
          </p>
          <Table>
            <THead>
              <Tr>
                <Th>{t('Day and model')}</Th>
                {CLASSES.map((c) => (
                  <Th key={c} className="text-right">
                    {labels[c]}
                  </Th>
                ))}
              </Tr>
            </THead>
            <TBody>
              {result.rows.map((r) => (
                <Tr key={`${r.day}|${r.model}`} data-testid={r.matches ? 'reconcile-match' : 'reconcile-diff'}>
                  <Td className="font-medium text-slate-900">
                    {r.day} · <span className="break-all">{r.model}</span>
                  </Td>
                  {CLASSES.map((c) => (
                    <Td key={c} className="text-right tabular-nums">
                      <span className="text-xs text-slate-500 sm:hidden">{labels[c]}: </span>
                      <span className={r.difference[c] === 0 ? 'text-slate-700' : 'font-medium text-red-700'}>
                        {r.difference[c] > 0 ? '+' : ''}
                        {n(r.difference[c])}
                      </span>
                      <div className="text-xs text-slate-600">
                        {t('Recorded')} {n(r.recorded[c])} / {t('Provider')} {n(r.provider[c])}
                      </div>
                    </Td>
                  ))}
                </Tr>
              ))}
            </TBody>
          </Table>
        </div>
      )}
    </div>
  );
}
