import { serverT } from '@/lib/i18n/server';
import type { ReactNode } from 'react';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { actingForPage, requestedDashboardPath, requirePageUser } from '@/lib/dashboard/session';
import { listOrganizations } from '@/lib/orgs/queries';
import { OrgSwitcher } from '@/components/orgs/org-switcher';
import { pageAllowed } from '@/lib/orgs/roles';
import { getAccount } from '@/lib/dashboard/queries';
import { tierLabel } from '@/lib/dashboard/format';
import { DashboardNav } from '@/components/dashboard/dashboard-nav';
import { SignOutButton } from '@/components/dashboard/sign-out-button';
import { Badge } from '@/components/ui/badge';
import { Logo } from '@/components/ui/logo';
import { isAdminSession } from '@/lib/admin/guard';
import { AnnouncementBanner } from '@/components/dashboard/announcement-banner';
import { ThemeSwitch } from '@/components/ui/theme-switch';
import { chosenTheme } from '@/lib/theme';
import { currentMessages } from '@/lib/i18n/server';
import { LanguageSwitch } from '@/components/ui/language-switch';
import { AlertBanner } from '@/components/dashboard/alert-banner';
import { StickyBar } from '@/components/ui/sticky-bar';
import { TimeZoneNote } from '@/components/ui/local-time';

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await requirePageUser();
  // The account the dashboard acts on: the organization chosen in the switcher, else the person's own.
  const acting = await actingForPage(user, await requestedDashboardPath());
  const [account, { locale, t }, orgs] = await Promise.all([getAccount(acting.id), currentMessages(), listOrganizations(user)]);
  // A valid session for a deleted account: treat as signed out.
  if (!account) redirect('/login');
  const admin = await isAdminSession(user.id);
  const tr = await serverT();

  return (
    <div className="min-h-screen">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm"
      >
        {t.skipToContent}
      </a>
      {/* Phones keep only the top bar on screen (it shrinks once scrolled) and let the nav, which
          wraps to several lines there, scroll away; from sm up the one-line nav stays under it. */}
      <header>
        <StickyBar className="border-b border-slate-200 bg-white/95 backdrop-blur sm:border-b-0">
          <div className="mx-auto max-w-6xl px-4 sm:px-6">
            <div className="flex h-14 items-center gap-3 transition-[height] group-data-[compact]:h-11 sm:group-data-[compact]:h-14">
              <Link href="/dashboard" className="shrink-0" aria-label={tr('Model Gateway overview')}>
                <Logo />
              </Link>
              <Badge tone="violet" className="hidden sm:inline-flex">
                {tierLabel(account.tier)}
              </Badge>
              <div className="ml-auto flex min-w-0 items-center gap-2">
                {admin && (
                  <Link href="/admin" className="text-sm font-medium text-amber-700 hover:text-amber-900" data-testid="admin-link">
                    Admin
                  </Link>
                )}
                <OrgSwitcher
                  orgs={orgs}
                  selected={acting.id}
                  labels={{
                    label: tr('Account or organization'),
                    personal: tr('Personal account'),
                    create: tr('+ Create organization'),
                    failed: tr('Could not switch. Reload the page and try again.'),
                  }}
                />
                <span className="hidden truncate text-sm text-slate-500 lg:inline" data-testid="account-email">
                  {user.email}
                </span>
                <LanguageSwitch locale={locale} label={t.language} className="hidden sm:flex" />
                <ThemeSwitch initial={await chosenTheme()} className="hidden sm:flex" labels={t.theme} />
                <SignOutButton label={t.logOut} busyLabel={t.loggingOut} />
              </div>
            </div>
          </div>
        </StickyBar>
        <DashboardNav labels={t.nav} role={acting.role} organization={acting.personal ? undefined : tr('Organization')} />
      </header>
      <AnnouncementBanner />
      {pageAllowed(acting.role, '/dashboard/alerts') && <AlertBanner userId={acting.id} />}
      {account.status === 'suspended' && (
        <div role="alert" className="border-b border-red-200 bg-red-50 px-4 py-2 text-center text-sm text-red-800">
          {tr('This account is suspended: API requests are refused with 403. Contact support to restore access.')}
        </div>
      )}
      <main id="main" className="mx-auto max-w-6xl px-4 py-6 sm:px-6 sm:py-8">
        {children}
        <TimeZoneNote template={tr('Times are in {zone}; daily totals are UTC days.')} />
      </main>
    </div>
  );
}
