import type { ReactNode } from 'react';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { requirePageUser } from '@/lib/dashboard/session';
import { getAccount } from '@/lib/dashboard/queries';
import { tierLabel } from '@/lib/dashboard/format';
import { DashboardNav } from '@/components/dashboard/dashboard-nav';
import { SignOutButton } from '@/components/dashboard/sign-out-button';
import { Badge } from '@/components/ui/badge';
import { Logo } from '@/components/ui/logo';
import { isAdminSession } from '@/lib/admin/guard';
import { AnnouncementBanner } from '@/components/dashboard/announcement-banner';
import { AlertBanner } from '@/components/dashboard/alert-banner';

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await requirePageUser();
  const account = await getAccount(user.id);
  // A valid session for a deleted account: treat as signed out.
  if (!account) redirect('/login');
  const admin = await isAdminSession(user.id);

  return (
    <div className="min-h-screen">
      <header className="sticky top-0 z-20 border-b border-slate-200 bg-white/95 backdrop-blur">
        <div className="mx-auto max-w-6xl px-4 sm:px-6">
          <div className="flex h-14 items-center gap-3">
            <Link href="/dashboard" className="shrink-0">
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
              <span className="hidden truncate text-sm text-slate-500 sm:inline" data-testid="account-email">
                {account.email}
              </span>
              <SignOutButton />
            </div>
          </div>
          <DashboardNav />
        </div>
      </header>
      <AnnouncementBanner />
      <AlertBanner userId={user.id} />
      {account.status === 'suspended' && (
        <div role="alert" className="border-b border-red-200 bg-red-50 px-4 py-2 text-center text-sm text-red-800">
          This account is suspended: API requests are refused with 403. Contact support to restore access.
        </div>
      )}
      <main className="mx-auto max-w-6xl px-4 py-6 sm:px-6 sm:py-8">{children}</main>
    </div>
  );
}
