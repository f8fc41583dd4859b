'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/components/ui/cn';
import type { Messages } from '@/lib/i18n/messages';

const items = [
  { href: '/dashboard', key: 'overview' },
  { href: '/dashboard/keys', key: 'keys' },
  { href: '/dashboard/projects', key: 'projects' },
  { href: '/dashboard/usage', key: 'usage' },
  { href: '/dashboard/logs', key: 'logs' },
  { href: '/dashboard/billing', key: 'billing' },
  { href: '/dashboard/alerts', key: 'alerts' },
  { href: '/dashboard/models', key: 'models' },
  { href: '/dashboard/playground', key: 'playground' },
  { href: '/dashboard/settings', key: 'settings' },
] as const;

export function DashboardNav({ labels }: { labels: Messages['nav'] }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Dashboard" className="-mb-px flex flex-wrap gap-x-1 sm:flex-nowrap sm:overflow-x-auto">
      {items.map((item) => {
        const active = item.href === '/dashboard' ? pathname === item.href : pathname.startsWith(item.href);
        return (
          <Link
            key={item.href}
            href={item.href}
            aria-current={active ? 'page' : undefined}
            className={cn(
              'whitespace-nowrap border-b-2 px-2 py-2.5 text-sm sm:px-3 font-medium transition-colors',
              active ? 'border-slate-900 text-slate-900' : 'border-transparent text-slate-600 hover:border-slate-300 hover:text-slate-800',
            )}
          >
            {labels[item.key]}
          </Link>
        );
      })}
    </nav>
  );
}
