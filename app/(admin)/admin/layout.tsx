import type { ReactNode } from 'react';
import Link from 'next/link';
import { requireOperator } from '@/lib/admin/guard';
import { AdminNav } from '@/components/admin/admin-nav';
import { SignOutButton } from '@/components/dashboard/sign-out-button';
import { Badge } from '@/components/ui/badge';
import { Logo } from '@/components/ui/logo';
import { LanguageSwitch } from '@/components/ui/language-switch';
import { currentMessages, serverT } from '@/lib/i18n/server';
import { StickyBar } from '@/components/ui/sticky-bar';
import { TimeZoneNote } from '@/components/ui/local-time';

// The operator's email in the header. Each page (and each of its loaders, lib/admin/console.ts) makes
// the same check itself: Next renders this layout and the page in parallel.
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const actor = await requireOperator();
  const [{ locale, t: m }, t] = await Promise.all([currentMessages(), serverT()]);
  return (
    <div className="min-h-screen">
      {/* As the dashboard: on phones only the top bar stays (and shrinks), the wrapped nav scrolls away. */}
      <header>
        <StickyBar className="border-b border-slate-200 bg-white/95 backdrop-blur sm:border-b-0">
          <div className="mx-auto max-w-6xl px-4 sm:px-6">
            <div className="flex h-14 items-center gap-3 transition-[height] group-data-[compact]:h-11 sm:group-data-[compact]:h-14">
              <Link href="/admin" className="shrink-0" aria-label={t('Operator console overview')}>
                {/* The name goes on phones: the Dashboard link and Log out need the room. */}
                <Logo className="max-sm:[&>span]:sr-only" />
              </Link>
              <Badge tone="amber" className="hidden sm:inline-flex">
                {t('Operator console')}
              </Badge>
              <div className="ml-auto flex min-w-0 items-center gap-2">
                <Link href="/dashboard" className="text-sm text-slate-500 hover:text-slate-800">
                  {t('Dashboard')}
                </Link>
                <span className="hidden truncate text-sm text-slate-500 sm:inline" data-testid="admin-email">
                  {actor.label}
                </span>
                <LanguageSwitch locale={locale} label={m.language} className="hidden sm:flex" />
                <SignOutButton label={m.logOut} busyLabel={m.loggingOut} />
              </div>
            </div>
          </div>
        </StickyBar>
        <AdminNav />
      </header>
      <main className="mx-auto max-w-6xl px-4 py-6 sm:px-6 sm:py-8">
        {children}
        <TimeZoneNote template={t('Times are in {zone}; daily totals are UTC days.')} />
      </main>
    </div>
  );
}
