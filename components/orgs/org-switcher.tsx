'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { useApiError, useT } from '@/lib/i18n/client';

export interface SwitcherOrg {
  id: string;
  name: string | null;
  personal: boolean;
}

const CREATE = '__create';

// A native <select>: keyboard, screen readers and phones' own pickers work without extra code.
// Choosing sets the selection (cookie, POST /api/orgs/select) and reloads the dashboard's overview,
// since the page on screen may not exist, or not be allowed, in the other account.
export function OrgSwitcher({ orgs, selected }: { orgs: SwitcherOrg[]; selected: string }) {
  const t = useT();
  const apiError = useApiError();
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function choose(id: string) {
    if (id === CREATE) {
      router.push('/dashboard/organization/new');
      return;
    }
    setBusy(true);
    setError(null);
    const res = await fetch('/api/orgs/select', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id }) });
    if (!res.ok) {
      setError((await apiError(res)).text);
      setBusy(false);
      return;
    }
    router.push('/dashboard');
    router.refresh();
  }

  return (
    <div className="flex min-w-0 items-center">
      <label htmlFor="org-switcher" className="sr-only">
        {t('Account or organization')}
      </label>
      <select
        id="org-switcher"
        data-testid="org-switcher"
        className="max-w-[9rem] truncate rounded-md border border-slate-300 bg-white py-1 pl-2 pr-7 text-sm text-slate-800 sm:max-w-[14rem]"
        value={selected}
        disabled={busy}
        onChange={(e) => void choose(e.target.value)}
      >
        {orgs.map((o) => (
          <option key={o.id} value={o.id}>
            {o.personal ? t('Personal account') : o.name}
          </option>
        ))}
        <option value={CREATE}>{t('+ Create organization')}</option>
      </select>
      {error && (
        <span role="alert" className="ml-2 text-xs text-red-700">
          {error}
        </span>
      )}
    </div>
  );
}
