import type { ReactNode } from 'react';
import Link from 'next/link';
import { requireOperator } from '@/lib/admin/guard';
import { AdminNav } from '@/components/admin/admin-nav';
import { SignOutButton } from '@/components/dashboard/sign-out-button';
import { Badge } from '@/components/ui/badge';
import { Logo } from '@/components/ui/logo';
import { LanguageSwitch } from '@/components/ui/language-switch';
import { currentMessages, serverT } from '@/lib/i18n/server';

// The operator's email in the header. Each page (and each of its loaders, lib/admin/console.ts) makes
// the same check itself: Next renders this layout and the page in parallel.
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const actor = await requireOperator();
  const [{ locale, t: m }, t] = await Promise.all([currentMessages(), serverT()]);
  return (
    <div className="min-h-screen">
      <header className="sticky top-0 z-20 border-b border-slate-200 bg-white/95 backdrop-blur">
        <div className="mx-auto max-w-6xl px-4 sm:px-6">
          <div className="flex h-14 items-center gap-3">
            <Link href="/admin" className="shrink-0">
              <Logo />
            </Link>
            <Badge tone="amber">{t('Operator console')}</Badge>
            <div className="ml-auto flex min-w-0 items-center gap-2">
              <Link href="/dashboard" className="hidden text-sm text-slate-500 hover:text-slate-800 sm:inline">
                {t('Dashboard')}
              </Link>
              <span className="hidden truncate text-sm text-slate-500 sm:inline" data-testid="admin-email">
                {actor.label}
              </span>
              <LanguageSwitch locale={locale} label={m.language} className="hidden sm:flex" />
              <SignOutButton label={m.logOut} busyLabel={m.loggingOut} />
            </div>
          </div>
          <AdminNav />
        </div>
      </header>
      <main className="mx-auto max-w-6xl px-4 py-6 sm:px-6 sm:py-8">{children}</main>
    </div>
  );
}
