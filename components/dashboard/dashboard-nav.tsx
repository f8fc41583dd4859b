'use client';

import { TabNav } from '@/components/ui/tab-nav';
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
  const shown: { href: string; label: string }[] = items.filter((i) => pageAllowed(role, i.href)).map((i) => ({ href: i.href, label: labels[i.key] }));
  if (organization) shown.splice(shown.length - 1, 0, { href: '/dashboard/organization', label: organization });
  return <TabNav label="Dashboard" root="/dashboard" items={shown} inactiveText="text-slate-600" />;
}
