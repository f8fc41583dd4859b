import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';
import { loginUrl, requestedDashboardPath } from '@/lib/dashboard/session';

// Rendered with status 401 by unauthorized() (the operator console without a session). Signing in
// comes back to the page that was asked for (proxy.ts tells it), e.g. /admin/accounts/<id>.
export default async function Unauthorized() {
  const back = await requestedDashboardPath('/admin');
  return (
    <main className="mx-auto max-w-md px-4 py-24 text-center">
      <h1 className="text-2xl font-semibold text-slate-900">Sign in required</h1>
      <p className="mt-2 text-sm text-slate-500">This page is for operators. Sign in with an admin account.</p>
      <Link href={loginUrl(back)} className={buttonClass({ className: 'mt-6' })} data-testid="unauthorized-sign-in">
        Sign in
      </Link>
    </main>
  );
}
