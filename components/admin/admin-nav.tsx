'use client';

import { TabNav } from '@/components/ui/tab-nav';
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
  { href: '/admin/sso', label: 'Single sign-on' },
  { href: '/admin/audit', label: 'Audit log' },
];

export function AdminNav() {
  const t = useT();
  return <TabNav label={t('Admin')} root="/admin" items={items.map((i) => ({ href: i.href, label: t(i.label) }))} inactiveText="text-slate-500" />;
}
