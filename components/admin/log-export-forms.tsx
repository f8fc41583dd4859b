'use client';

import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';
import type { LogExportWords } from '@/lib/log-export/messages';

/** A datetime-local value (the viewer's clock) as an ISO instant. */
const toIso = (local: string) => new Date(local).toISOString();

/** Queues a replay of a time range to the export webhook. */
export function ReplayForm({ w }: { w: LogExportWords }) {
  const { busy, error, send } = useAdminAction();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [queued, setQueued] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setQueued(false);
    const done = await send('/api/admin/log-export/replay', 'POST', { from: toIso(from), to: toIso(to) });
    if (done) setQueued(true);
  }

  return (
    <div className="space-y-3">
      <form onSubmit={submit} className="grid gap-3 sm:grid-cols-3 sm:items-end">
        <Field label={w.from} htmlFor="replay-from">
          <Input id="replay-from" type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} data-testid="replay-from" required />
        </Field>
        <Field label={w.to} htmlFor="replay-to">
          <Input id="replay-to" type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} data-testid="replay-to" required />
        </Field>
        <Button type="submit" disabled={busy} data-testid="replay-start">
          {w.startReplay}
        </Button>
      </form>
      {error && <Alert tone="error">{error}</Alert>}
      {queued && <Alert tone="success">{w.queued}</Alert>}
    </div>
  );
}

/** Builds the download link of the operator's export (a plain GET: the browser streams it to a file). */
export function ExportForm({ w }: { w: LogExportWords }) {
  const [account, setAccount] = useState('');
  const [model, setModel] = useState('');
  const [channel, setChannel] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [format, setFormat] = useState('csv');
  const params = new URLSearchParams({ format });
  if (account.trim()) params.set('account', account.trim());
  if (model.trim()) params.set('model', model.trim());
  if (channel.trim()) params.set('channel', channel.trim());
  if (from) params.set('from', toIso(from));
  if (to) params.set('to', toIso(to));
  return (
    <div className="grid gap-3 sm:grid-cols-3 sm:items-end">
      <Field label={w.account} htmlFor="export-account">
        <Input id="export-account" value={account} onChange={(e) => setAccount(e.target.value)} data-testid="export-account" />
      </Field>
      <Field label={w.model} htmlFor="export-model">
        <Input id="export-model" value={model} onChange={(e) => setModel(e.target.value)} data-testid="export-model" />
      </Field>
      <Field label={w.channel} htmlFor="export-channel">
        <Input id="export-channel" value={channel} onChange={(e) => setChannel(e.target.value)} data-testid="export-channel" />
      </Field>
      <Field label={w.from} htmlFor="export-from">
        <Input id="export-from" type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} data-testid="export-from" />
      </Field>
      <Field label={w.to} htmlFor="export-to">
        <Input id="export-to" type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} data-testid="export-to" />
      </Field>
      <Field label={w.format} htmlFor="export-format">
        <Select id="export-format" value={format} onChange={(e) => setFormat(e.target.value)} data-testid="export-format">
          <option value="csv">CSV</option>
          <option value="jsonl">JSONL</option>
        </Select>
      </Field>
      <a
        href={`/api/admin/logs/export?${params}`}
        download
        data-testid="export-download"
        className="inline-flex h-10 items-center justify-center rounded-md bg-slate-900 px-4 text-sm font-medium text-white hover:bg-slate-800"
      >
        {w.downloadButton}
      </a>
    </div>
  );
}
