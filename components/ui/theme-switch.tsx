'use client';

import { useState } from 'react';

type Theme = 'system' | 'light' | 'dark';

/** System, light or dark; remembered in a cookie the root layout reads, so the page is painted right the first time. */
const englishLabels = { label: 'Colour theme', system: 'System theme', light: 'Light', dark: 'Dark' };

export function ThemeSwitch({ initial, className, labels = englishLabels }: { initial: Theme; className?: string; labels?: typeof englishLabels }) {
  const [theme, setTheme] = useState<Theme>(initial);
  function choose(next: Theme) {
    setTheme(next);
    document.cookie = `theme=${next}; path=/; max-age=31536000; samesite=lax`;
    if (next === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = next;
  }
  return (
    <label className={`items-center text-sm text-slate-600 ${className ?? 'flex'}`}>
      <span className="sr-only">{labels.label}</span>
      <select
        value={theme}
        onChange={(e) => choose(e.target.value as Theme)}
        className="h-8 rounded-md border border-slate-200 bg-white px-1.5 text-xs text-slate-700"
        data-testid="theme-switch"
        data-placement={className ? 'header' : 'settings'}
      >
        <option value="system">{labels.system}</option>
        <option value="light">{labels.light}</option>
        <option value="dark">{labels.dark}</option>
      </select>
    </label>
  );
}
