'use client';

import { useState, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { useApiError, useT } from '@/lib/i18n/client';
import { Button } from '@/components/ui/button';
import { Field, Textarea } from '@/components/ui/input';
import { Alert } from '@/components/ui/alert';

/**
 * The organization's SSO-required email domains (PUT /api/orgs/:id/sso, docs/decisions/052): one per
 * line or comma-separated. The API refuses a public mail domain, a domain another organization has,
 * and one the person has not signed in at through SSO; its words are shown as they come.
 */
export function SsoDomainsForm({ orgId, initial }: { orgId: string; initial: string[] }) {
  const t = useT();
  const apiError = useApiError();
  const router = useRouter();
  const [text, setText] = useState(initial.join('\n'));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  async function save(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const domains = text
        .split(/[\s,]+/)
        .map((d) => d.trim().toLowerCase())
        .filter(Boolean);
      const res = await fetch(`/api/orgs/${orgId}/sso`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domains }),
      });
      if (!res.ok) {
        setError((await apiError(res)).text);
        return;
      }
      setText(((await res.json()) as { domains: string[] }).domains.join('\n'));
      setSaved(true);
      router.refresh();
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="space-y-3" onSubmit={(e) => void save(e)} data-testid="sso-domains-form">
      {error && (
        <Alert tone="error" data-testid="sso-domains-error">
          {error}
        </Alert>
      )}
      {saved && (
        <Alert tone="success" data-testid="sso-domains-saved">
          {t('Saved.')}
        </Alert>
      )}
      <Field label={t('Email domains')} htmlFor="sso-domains" hint={t('One per line or separated by commas, e.g. example.com. Empty: no domain requires SSO.')}>
        <Textarea id="sso-domains" rows={3} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </Field>
      <Button type="submit" disabled={busy}>
        {t('Save domains')}
      </Button>
    </form>
  );
}
