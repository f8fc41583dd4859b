'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';

export interface SwitcherOrg {
  id: string;
  name: string | null;
  personal: boolean;
}

const CREATE = '__create';

export interface SwitcherLabels {
  label: string;
  personal: string;
  create: string;
  failed: string;
}

// Labels come translated from the layout, so the phrase tables stay off the overview's script budget.
// A native <select>: keyboard, screen readers and phones' own pickers work without extra code.
// Choosing sets the selection (cookie, POST /api/orgs/select) and reloads the dashboard's overview,
// since the page on screen may not exist, or not be allowed, in the other account.
export function OrgSwitcher({ orgs, selected, labels }: { orgs: SwitcherOrg[]; selected: string; labels: SwitcherLabels }) {
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
      setError(labels.failed);
      setBusy(false);
      return;
    }
    router.push('/dashboard');
    router.refresh();
  }

  return (
    <div className="flex min-w-0 shrink items-center">
      <label htmlFor="org-switcher" className="sr-only">
        {labels.label}
      </label>
      <select
        id="org-switcher"
        data-testid="org-switcher"
        className="w-full min-w-0 max-w-[14rem] truncate rounded-md border border-slate-300 bg-white py-1 pl-2 pr-7 text-sm text-slate-800"
        value={selected}
        disabled={busy}
        onChange={(e) => void choose(e.target.value)}
      >
        {orgs.map((o) => (
          <option key={o.id} value={o.id}>
            {o.personal ? labels.personal : o.name}
          </option>
        ))}
        <option value={CREATE}>{labels.create}</option>
      </select>
      {error && (
        <span role="alert" className="ml-2 text-xs text-red-700">
          {error}
        </span>
      )}
    </div>
  );
}
