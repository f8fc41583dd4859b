'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';

/** Sends one admin API call, shows its error, and refreshes the server-rendered page on success. */
export function useAdminAction() {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function send<T = unknown>(url: string, method: 'POST' | 'DELETE', body?: unknown): Promise<T | null> {
    setBusy(true);
    setError(null);
    try {
      const res = await fetch(url, {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = (await res.json().catch(() => ({}))) as T & { error?: { message?: string } };
      if (!res.ok) {
        setError(data.error?.message ?? `Request failed (HTTP ${res.status}).`);
        return null;
      }
      router.refresh();
      return data;
    } catch {
      setError('Network error: try again.');
      return null;
    } finally {
      setBusy(false);
    }
  }

  return { busy, error, send };
}
