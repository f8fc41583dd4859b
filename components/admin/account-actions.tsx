'use client';

import { useT } from '@/lib/i18n/client';
import type { Phrase } from '@/lib/i18n/translate';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';
import { ConfirmDeleteButton } from './confirm-delete-button';
import { formatMoneyText } from '@/lib/format';

const tiers = ['free', 'pro', 'vip', 'enterprise'];

type Limits = { rpm?: number; rph?: number; tokensPerDay?: number | null; concurrency?: number };
const limitFields: [keyof Limits, Phrase][] = [
  ['rpm', 'Requests/min'],
  ['rph', 'Requests/hour'],
  ['tokensPerDay', 'Tokens/day'],
  ['concurrency', 'Concurrent'],
];

export function AccountActions({
  id,
  tier,
  pinned,
  status,
  role,
  limits,
  region = null,
  regions = [],
}: {
  id: string;
  tier: string;
  pinned: boolean;
  status: string;
  role: string;
  limits: Limits | null;
  /** The account's region pin (null: anywhere). */
  region?: string | null;
  /** The regions the operator config's channels declare. */
  regions?: string[];
}) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const [newTier, setNewTier] = useState(tier);
  const [newRegion, setNewRegion] = useState(region ?? '');
  const [pin, setPin] = useState(pinned);
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [limitText, setLimitText] = useState<Record<string, string>>(() =>
    Object.fromEntries(limitFields.map(([k]) => [k, limits?.[k] === undefined || limits?.[k] === null ? '' : String(limits[k])])),
  );
  const limitsValid = Object.values(limitText).every((v) => v.trim() === '' || /^\d{1,9}$/.test(v.trim()));

  function saveLimits() {
    const body: Limits = {};
    for (const [k] of limitFields) if (limitText[k].trim() !== '') body[k] = Number(limitText[k].trim());
    void send(url, 'POST', { action: 'set_limits', limits: body });
  }
  const url = `/api/admin/accounts/${id}`;

  async function adjust(e: FormEvent, sign: 1 | -1) {
    e.preventDefault();
    setDone(null);
    const text = amount.trim();
    const result = await send<{ balance_usd: string }>(url, 'POST', { action: 'adjust_balance', amount_usd: sign < 0 ? `-${text}` : text, note });
    if (result) {
      const vars = { amount: formatMoneyText(text), balance: formatMoneyText(result.balance_usd) };
      setDone(sign > 0 ? t('Credited {amount}; balance now {balance}.', vars) : t('Debited {amount}; balance now {balance}.', vars));
      setAmount('');
      setNote('');
    }
  }

  return (
    <div className="space-y-5">
      {error && (
        <Alert tone="error" data-testid="admin-error">
          {error}
        </Alert>
      )}
      {done && (
        <Alert tone="success" data-testid="admin-done">
          {done}
        </Alert>
      )}
      <form className="space-y-3" onSubmit={(e) => adjust(e, 1)}>
        <div className="grid gap-3 sm:grid-cols-2">
          <Field label={t('Amount (USD)')} htmlFor="amount">
            <Input
              id="amount"
              inputMode="decimal"
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              placeholder="10.00"
              data-testid="amount"
              required
            />
          </Field>
          <Field label={t('Note')} htmlFor="note">
            <Input
              id="note"
              value={note}
              onChange={(e) => setNote(e.target.value)}
              placeholder={t('Why (kept in the ledger and audit log)')}
              data-testid="note"
              maxLength={500}
            />
          </Field>
        </div>
        <div className="flex gap-2">
          <Button type="submit" disabled={busy || !amount} data-testid="credit">
            {t('Credit')}
          </Button>
          <Button variant="secondary" disabled={busy || !amount} onClick={(e) => adjust(e, -1)} data-testid="debit">
            {t('Debit')}
          </Button>
        </div>
      </form>
      <div className="flex flex-wrap items-end gap-3 border-t border-slate-100 pt-4">
        <Field label={t('Tier')} htmlFor="tier">
          <Select id="tier" value={newTier} onChange={(e) => setNewTier(e.target.value)} data-testid="tier-select">
            {tiers.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </Select>
        </Field>
        <label className="flex h-10 items-center gap-2 text-sm text-slate-700">
          <input type="checkbox" checked={pin} onChange={(e) => setPin(e.target.checked)} data-testid="tier-pin" /> {t('Pin (no automatic promotion)')}
        </label>
        <Button
          variant="secondary"
          disabled={busy}
          onClick={() => send(url, 'POST', { action: 'set_tier', tier: newTier, pinned: pin })}
          data-testid="set-tier"
        >
          {t('Save tier')}
        </Button>
      </div>
      <div className="space-y-2 border-t border-slate-100 pt-4">
        <p className="text-sm font-medium text-slate-700">{t("Custom limits (VIP within its range, enterprise any; empty = the tier's)")}</p>
        <div className="flex flex-wrap items-end gap-3">
          {limitFields.map(([k, label]) => (
            <Field key={k} label={t(label)} htmlFor={`limit-${k}`} className="w-32">
              <Input
                id={`limit-${k}`}
                inputMode="numeric"
                value={limitText[k]}
                onChange={(e) => setLimitText({ ...limitText, [k]: e.target.value })}
                data-testid={`limit-${k}`}
              />
            </Field>
          ))}
          <Button variant="secondary" disabled={busy || !limitsValid} onClick={saveLimits} data-testid="save-limits">
            {t('Save limits')}
          </Button>
        </div>
      </div>
      <div className="flex flex-wrap items-end gap-3 border-t border-slate-100 pt-4">
        <Field label={t('Region pin')} htmlFor="region" hint={t('Its requests are served only by channels of this region.')}>
          <Select id="region" value={newRegion} onChange={(e) => setNewRegion(e.target.value)} data-testid="region-select">
            <option value="">{t('Any region')}</option>
            {[...new Set([...regions, ...(region ? [region] : [])])].map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </Select>
        </Field>
        <Button
          variant="secondary"
          disabled={busy}
          onClick={() => send(url, 'POST', { action: 'set_region', region: newRegion === '' ? null : newRegion })}
          data-testid="set-region"
        >
          {t('Save region')}
        </Button>
      </div>
      <div className="flex flex-wrap gap-2 border-t border-slate-100 pt-4">
        {status === 'active' ? (
          <Button
            variant="danger"
            disabled={busy}
            onClick={() =>
              confirm(
                t(
                  'Suspend this account? Every request with its API keys gets 403 (account_suspended) at once; its balance and keys are kept, and Unsuspend restores them.',
                ),
              ) && send(url, 'POST', { action: 'set_status', status: 'suspended' })
            }
            data-testid="suspend"
          >
            {t('Suspend')}
          </Button>
        ) : (
          <Button disabled={busy} onClick={() => send(url, 'POST', { action: 'set_status', status: 'active' })} data-testid="unsuspend">
            {t('Unsuspend')}
          </Button>
        )}
        <Button
          variant="ghost"
          disabled={busy}
          onClick={() => send(url, 'POST', { action: 'set_role', role: role === 'admin' ? 'user' : 'admin' })}
          data-testid="toggle-role"
        >
          {role === 'admin' ? t('Remove admin role') : t('Make admin')}
        </Button>
      </div>
    </div>
  );
}

export function RevokeKeyButton({ accountId, keyId }: { accountId: string; keyId: string }) {
  const t = useT();
  return (
    <ConfirmDeleteButton
      url={`/api/admin/accounts/${accountId}/keys/${keyId}`}
      question={t('Revoke this key on every instance?')}
      label={t('Revoke')}
      testId="revoke-key"
    />
  );
}
