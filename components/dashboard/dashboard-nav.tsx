'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cn } from '@/components/ui/cn';
import type { Messages } from '@/lib/i18n/messages';
import { pageAllowed, type OrgRole } from '@/lib/orgs/roles';

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

/** The pages of the dashboard the role may see (a personal account is its owner's), plus the organization's page. */
// The organization's label comes translated from the layout: the phrase tables stay off the overview's script budget.
export function DashboardNav({ labels, role = 'owner', organization }: { labels: Messages['nav']; role?: OrgRole; organization?: string }) {
  const pathname = usePathname();
  const shown: { href: string; label: string }[] = items.filter((i) => pageAllowed(role, i.href)).map((i) => ({ href: i.href, label: labels[i.key] }));
  if (organization) shown.splice(shown.length - 1, 0, { href: '/dashboard/organization', label: organization });
  return (
    <nav aria-label="Dashboard" className="-mb-px flex flex-wrap gap-x-1 sm:flex-nowrap sm:overflow-x-auto">
      {shown.map((item) => {
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
            {item.label}
          </Link>
        );
      })}
    </nav>
  );
}
