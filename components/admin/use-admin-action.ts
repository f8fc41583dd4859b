'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';

/** Sends one admin API call, shows its error, and refreshes the server-rendered page on success. */
export function useAdminAction() {
  const router = useRouter();
  const t = useT();
  const locale = useLocale();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function send<T = unknown>(url: string, method: 'POST' | 'PUT' | 'DELETE', body?: unknown): Promise<T | null> {
    setBusy(true);
    setError(null);
    try {
      const res = await fetch(url, {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = (await res.json().catch(() => ({}))) as T & ApiErrorJson;
      if (!res.ok) {
        setError(apiErrorText(locale, data, res.status, t('Request failed (HTTP {status}).', { status: res.status })));
        return null;
      }
      router.refresh();
      return data;
    } catch {
      setError(t('Network error: try again.'));
      return null;
    } finally {
      setBusy(false);
    }
  }

  return { busy, error, send };
}
