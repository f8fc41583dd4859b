'use client';

import { useId, useState } from 'react';
import { useT } from '@/lib/i18n/client';
import { CodeBlock } from './code-block';
import { cn } from './cn';

export interface CodeTab {
  id: string;
  label: string;
  code: string;
}

export function CodeTabs({ tabs }: { tabs: CodeTab[] }) {
  const tr = useT();
  const [active, setActive] = useState(tabs[0]?.id);
  const base = useId();
  const current = tabs.find((t) => t.id === active) ?? tabs[0];
  return (
    <div>
      <div role="tablist" aria-label={tr('Client')} className="mb-2 flex gap-1 overflow-x-auto">
        {tabs.map((t) => (
          <button
            key={t.id}
            id={`${base}-${t.id}`}
            type="button"
            role="tab"
            aria-selected={t.id === current.id}
            aria-controls={`${base}-panel`}
            onClick={() => setActive(t.id)}
            className={cn(
              'whitespace-nowrap rounded-md px-3 py-1.5 text-sm font-medium transition-colors',
              t.id === current.id ? 'bg-slate-900 text-white' : 'text-slate-600 hover:bg-slate-200/60 hover:text-slate-900',
            )}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-${current.id}`}>
        <CodeBlock code={current.code} label={current.label} />
      </div>
    </div>
  );
}
