'use client';

import { useT } from '@/lib/i18n/client';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';
import { formatMoneyText } from '@/lib/format';

interface Created {
  batchId: string;
  amountUsd: string;
  expiresAt: string | null;
  codes: { id: string; code: string }[];
}

/** Creates a batch; its codes are shown (and downloadable as CSV) only now: the server keeps hashes. */
export function CodeBatchForm({ plans = [] }: { plans?: { id: string; name: string }[] }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const [amount, setAmount] = useState('10');
  const [count, setCount] = useState('10');
  const [expires, setExpires] = useState('');
  // A code may carry a plan for some days (lib/plans), with or without an amount.
  const [plan, setPlan] = useState('');
  const [planDays, setPlanDays] = useState('30');
  const [created, setCreated] = useState<Created | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setCreated(null);
    setCreated(
      await send<Created>('/api/admin/codes', 'POST', {
        ...(plan && amount.trim() === '' ? {} : { amount_usd: amount.trim() }),
        count: Number(count),
        expires_at: expires ? new Date(`${expires}T23:59:59Z`).toISOString() : null,
        ...(plan ? { plan, plan_days: Number(planDays) } : {}),
      }),
    );
  }

  function download() {
    if (!created) return;
    const lines = ['code,amount_usd,expires_at', ...created.codes.map((c) => `${c.code},${created.amountUsd},${created.expiresAt ?? ''}`)];
    const url = URL.createObjectURL(new Blob([`${lines.join('\n')}\n`], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `codes-${created.batchId}.csv`;
    a.click();
    URL.revokeObjectURL(url);
  }

  return (
    <div className="space-y-4">
      <form onSubmit={submit} className="grid gap-3 sm:grid-cols-4 sm:items-end">
        <Field label={t('Value (USD)')} htmlFor="code-amount">
          <Input id="code-amount" value={amount} onChange={(e) => setAmount(e.target.value)} data-testid="code-amount" required={!plan} />
        </Field>
        <Field label={t('Count')} htmlFor="code-count">
          <Input id="code-count" type="number" min={1} max={1000} value={count} onChange={(e) => setCount(e.target.value)} data-testid="code-count" required />
        </Field>
        <Field label={t('Expires (optional)')} htmlFor="code-expires">
          <Input id="code-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} data-testid="code-expires" />
        </Field>
        {plans.length > 0 && (
          <Field label={t('Plan')} htmlFor="code-plan">
            <Select id="code-plan" value={plan} onChange={(e) => setPlan(e.target.value)} data-testid="code-plan">
              <option value="">{t('No plan')}</option>
              {plans.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </Select>
          </Field>
        )}
        {plan && (
          <Field label={t('Days')} htmlFor="code-plan-days">
            <Input
              id="code-plan-days"
              inputMode="numeric"
              value={planDays}
              onChange={(e) => setPlanDays(e.target.value)}
              data-testid="code-plan-days"
              required
            />
          </Field>
        )}
        <Button type="submit" disabled={busy} data-testid="create-codes">
          {t('Create codes')}
        </Button>
      </form>
      {error && (
        <Alert tone="error" data-testid="codes-error">
          {error}
        </Alert>
      )}
      {created && (
        <Alert
          tone="warning"
          title={t('{n} codes of {amount} created: copy or download them now, they are not shown again.', {
            n: created.codes.length,
            amount: formatMoneyText(created.amountUsd),
          })}
        >
          <div className="mt-2 space-y-2">
            <Button size="sm" variant="secondary" onClick={download} data-testid="download-codes">
              {t('Download CSV')}
            </Button>
            <pre className="max-h-60 overflow-auto rounded bg-white/70 p-2 font-mono text-xs" data-testid="new-codes">
              {created.codes.map((c) => c.code).join('\n')}
            </pre>
          </div>
        </Alert>
      )}
    </div>
  );
}
