'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/components/ui/cn';

// The underlined tab row under the header bar of the dashboard and admin layouts. Labels come translated from the caller:
// this file imports no phrase table (the dashboard's overview keeps them off its script budget).

/**
 * `root` is active only on itself; every other tab also on the pages below it. `inactiveText`: the
 * text colour class of the tabs not current.
 */
export function TabNav({
  label,
  root,
  items,
  inactiveText,
}: {
  label: string;
  root: string;
  items: { href: string; label: string }[];
  inactiveText: 'text-slate-500' | 'text-slate-600';
}) {
  const pathname = usePathname();
  return (
    <div className="border-b border-slate-200 bg-white/95 backdrop-blur sm:sticky sm:top-14 sm:z-10">
      <div className="mx-auto max-w-6xl px-4 sm:px-6">
        <nav aria-label={label} className="-mb-px flex flex-wrap gap-x-1 sm:flex-nowrap sm:overflow-x-auto">
          {items.map((item) => {
            const active = item.href === root ? pathname === item.href : pathname.startsWith(item.href);
            return (
              <Link
                key={item.href}
                href={item.href}
                aria-current={active ? 'page' : undefined}
                className={cn(
                  'whitespace-nowrap border-b-2 px-2 py-2.5 text-sm font-medium transition-colors sm:px-3',
                  active ? 'border-slate-900 text-slate-900' : `border-transparent ${inactiveText} hover:border-slate-300 hover:text-slate-800`,
                )}
              >
                {item.label}
              </Link>
            );
          })}
        </nav>
      </div>
    </div>
  );
}
