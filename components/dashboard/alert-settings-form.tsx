'use client';

import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, apiFieldErrors, type ApiErrorJson } from '@/lib/i18n/codes';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { CopyButton } from '@/components/ui/copy-button';
import { Field, Input } from '@/components/ui/input';
import type { AlertSettingsView } from '@/lib/alerts/settings';
import { formErrors } from '@/lib/schemas/fields';
import { alertSettings } from '@/lib/schemas/alerts';

type Result = AlertSettingsView & { secret?: string } & ApiErrorJson;

/** The account's alert thresholds and webhook (PUT /api/alerts/settings); the signing secret is shown once. */
export function AlertSettingsForm({ initial }: { initial: AlertSettingsView }) {
  const t = useT();
  const locale = useLocale();
  const [fields, setFields] = useState<Record<string, string>>({});
  const router = useRouter();
  const [settings, setSettings] = useState(initial);
  const [url, setUrl] = useState(initial.webhook_url ?? '');
  const [thresholds, setThresholds] = useState(initial.thresholds.join(', '));
  const [lowBalance, setLowBalance] = useState(initial.low_balance_usd ?? '');
  const [secret, setSecret] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: 'success' | 'error'; text: string } | null>(null);

  async function call(method: string, path: string, body?: unknown) {
    setBusy(true);
    setMessage(null);
    setFields({});
    try {
      const res = await fetch(path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = (await res.json().catch(() => ({}))) as Result;
      if (!res.ok) {
        setMessage({ tone: 'error', text: apiErrorText(locale, data, res.status, t('Not saved (HTTP {status}).', { status: res.status })) });
        setFields(apiFieldErrors(locale, data));
        return;
      }
      setSettings(data);
      if (data.secret) setSecret(data.secret);
      setMessage({ tone: 'success', text: t('Saved.') });
      router.refresh();
    } catch {
      setMessage({ tone: 'error', text: t('Network error: try again.') });
    } finally {
      setBusy(false);
    }
  }

  function save(e: FormEvent) {
    e.preventDefault();
    const list = thresholds
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((v) => Number(v.replace(/%$/, '')));
    const body = { webhook_url: url.trim() || null, thresholds: list, low_balance_usd: lowBalance.trim() || null };
    // The route's own schema first: what it refuses is said at once, in the same words.
    const bad = formErrors(locale, alertSettings, body);
    if (bad) {
      setFields(bad.fields);
      setMessage({ tone: 'error', text: bad.text });
      return;
    }
    void call('PUT', '/api/alerts/settings', body);
  }

  return (
    <form onSubmit={save} className="space-y-4" data-testid="alert-settings">
      <Field
        label={t('Budget thresholds (%)')}
        htmlFor="alert-thresholds"
        error={fields.thresholds}
        hint={t("Of each key's lifetime and monthly budget; each fires once per budget and month.")}
      >
        <Input
          id="alert-thresholds"
          value={thresholds}
          onChange={(e) => setThresholds(e.target.value)}
          placeholder="50, 80, 100"
          data-testid="alert-thresholds"
        />
      </Field>
      <Field
        label={t('Low balance alert (USD)')}
        htmlFor="alert-low-balance"
        error={fields.low_balance_usd}
        hint={t('Fires when the balance falls below it; again after it has been above.')}
      >
        <Input
          id="alert-low-balance"
          inputMode="decimal"
          value={lowBalance}
          onChange={(e) => setLowBalance(e.target.value)}
          placeholder={t('none')}
          data-testid="alert-low-balance"
        />
      </Field>
      <Field
        label={t('Webhook URL')}
        htmlFor="alert-webhook"
        error={fields.webhook_url}
        hint={t("Optional: each alert is POSTed here, signed (see the README's Budget alerts).")}
      >
        <Input
          id="alert-webhook"
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://example.com/hooks/gateway"
          data-testid="alert-webhook"
        />
      </Field>
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" disabled={busy} data-testid="alert-save">
          {settings.enabled ? t('Save') : t('Turn on alerts')}
        </Button>
        {settings.enabled && (
          <Button variant="secondary" disabled={busy} onClick={() => void call('POST', '/api/alerts/settings/secret')} data-testid="alert-regenerate">
            {t('New signing secret')}
          </Button>
        )}
        {settings.secret_hint && !secret && <span className="text-xs text-slate-500">{t('Signing secret {hint}', { hint: settings.secret_hint })}</span>}
      </div>
      {secret && (
        <Alert tone="warning" title={t('Signing secret: copy it now, it is not shown again')} data-testid="alert-secret">
          <div className="flex items-center gap-2">
            <code className="break-all font-mono text-xs">{secret}</code>
            <CopyButton value={secret} variant="ghost" />
          </div>
        </Alert>
      )}
      {message && (
        <Alert tone={message.tone} data-testid="alert-message">
          {message.text}
        </Alert>
      )}
    </form>
  );
}
