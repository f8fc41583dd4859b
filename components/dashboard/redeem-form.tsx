'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { formatMoneyText } from '@/lib/format';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';

/** Redeems a prepaid code (POST /api/payment/redeem) and refreshes the balance shown. */
export function RedeemForm() {
  const t = useT();
  const locale = useLocale();
  const router = useRouter();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: 'success' | 'error'; text: string } | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const res = await fetch('/api/payment/redeem', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: code.trim() }),
      });
      const body = (await res.json().catch(() => ({}))) as { credited_usd?: string; balance_usd?: string } & ApiErrorJson;
      if (res.ok) {
        setMessage({
          tone: 'success',
          text: t('{credited} added. Balance: {balance}.', {
            credited: formatMoneyText(body.credited_usd ?? ''),
            balance: formatMoneyText(body.balance_usd ?? ''),
          }),
        });
        setCode('');
        router.refresh();
      } else
        setMessage({
          tone: 'error',
          text: apiErrorText(locale, body, res.status, t('The code could not be redeemed (HTTP {status}).', { status: res.status })),
        });
    } catch {
      setMessage({ tone: 'error', text: t('Network error: try again.') });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="mt-4 space-y-2 border-t border-slate-100 pt-4">
      <label htmlFor="redeem-code" className="block text-sm font-medium text-slate-700">
        {t('Have a code?')}
      </label>
      <div className="flex gap-2">
        <Input
          id="redeem-code"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          placeholder="GW-XXXXX-XXXXX-XXXXX-XXXXX"
          autoComplete="off"
          data-testid="redeem-code"
        />
        <Button type="submit" variant="secondary" disabled={busy || !code.trim()} data-testid="redeem-submit">
          {t('Redeem')}
        </Button>
      </div>
      {message && (
        <Alert tone={message.tone} data-testid="redeem-message">
          {message.text}
        </Alert>
      )}
    </form>
  );
}
