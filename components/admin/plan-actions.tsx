'use client';

import { useState } from 'react';
import { useT } from '@/lib/i18n/client';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';

/** The operator grants an account a plan for some days (extending the same plan) or ends it now. */
export function PlanActions({ id, plans, current }: { id: string; plans: { id: string; name: string }[]; current: string | null }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const [plan, setPlan] = useState(current ?? plans[0]?.id ?? '');
  const [days, setDays] = useState('30');
  const daysValid = /^\d{1,4}$/.test(days.trim()) && Number(days) >= 1;
  const url = `/api/admin/accounts/${id}`;
  if (plans.length === 0) return null;
  return (
    <div className="space-y-3 border-t border-slate-100 pt-4">
      {error && <Alert tone="error">{error}</Alert>}
      <div className="flex flex-wrap items-end gap-3">
        <Field label={t('Plan')} htmlFor="grant-plan">
          <Select id="grant-plan" value={plan} onChange={(e) => setPlan(e.target.value)} data-testid="grant-plan-select">
            {plans.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </Select>
        </Field>
        <Field label={t('Days')} htmlFor="grant-days" className="w-24">
          <Input id="grant-days" inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} data-testid="grant-plan-days" />
        </Field>
        <Button
          variant="secondary"
          disabled={busy || !daysValid || !plan}
          onClick={() => send(url, 'POST', { action: 'grant_plan', plan, days: Number(days) })}
          data-testid="grant-plan"
        >
          {t('Grant plan')}
        </Button>
        {current && (
          <Button
            variant="danger"
            disabled={busy}
            onClick={() =>
              confirm(t('End this account’s plan now? Its requests are billed to the balance from the next one.')) && send(url, 'POST', { action: 'end_plan' })
            }
            data-testid="end-plan"
          >
            {t('End plan now')}
          </Button>
        )}
      </div>
    </div>
  );
}
