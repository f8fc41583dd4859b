'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/components/ui/cn';

const items = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/keys', label: 'Keys' },
  { href: '/dashboard/logs', label: 'Logs' },
  { href: '/dashboard/billing', label: 'Billing' },
  { href: '/dashboard/alerts', label: 'Alerts' },
  { href: '/dashboard/models', label: 'Models' },
];

export function DashboardNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Dashboard" className="-mb-px flex gap-1 overflow-x-auto">
      {items.map((item) => {
        const active = item.href === '/dashboard' ? pathname === item.href : pathname.startsWith(item.href);
        return (
          <Link
            key={item.href}
            href={item.href}
            aria-current={active ? 'page' : undefined}
            className={cn(
              'whitespace-nowrap border-b-2 px-3 py-2.5 text-sm font-medium transition-colors',
              active ? 'border-slate-900 text-slate-900' : 'border-transparent text-slate-500 hover:border-slate-300 hover:text-slate-800',
            )}
          >
            {item.label}
          </Link>
        );
      })}
    </nav>
  );
}
