'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/components/ui/cn';
import { useT } from '@/lib/i18n/client';
import type { Phrase } from '@/lib/i18n/translate';

const items: { href: string; label: Phrase }[] = [
  { href: '/admin', label: 'Overview' },
  { href: '/admin/accounts', label: 'Accounts' },
  { href: '/admin/channels', label: 'Channels' },
  { href: '/admin/logs', label: 'Logs' },
  { href: '/admin/log-export', label: 'Log export' },
  { href: '/admin/reconciliation', label: 'Reconciliation' },
  { href: '/admin/codes', label: 'Codes' },
  { href: '/admin/plans', label: 'Plans' },
  { href: '/admin/announcements', label: 'Announcements' },
  { href: '/admin/audit', label: 'Audit log' },
];

export function AdminNav() {
  const pathname = usePathname();
  const t = useT();
  return (
    <nav aria-label={t('Admin')} className="-mb-px flex flex-wrap gap-x-1 sm:flex-nowrap sm:overflow-x-auto">
      {items.map((item) => {
        const active = item.href === '/admin' ? pathname === item.href : pathname.startsWith(item.href);
        return (
          <Link
            key={item.href}
            href={item.href}
            aria-current={active ? 'page' : undefined}
            className={cn(
              'whitespace-nowrap border-b-2 px-2 py-2.5 sm:px-3 text-sm font-medium transition-colors',
              active ? 'border-slate-900 text-slate-900' : 'border-transparent text-slate-500 hover:border-slate-300 hover:text-slate-800',
            )}
          >
            {t(item.label)}
          </Link>
        );
      })}
    </nav>
  );
}
