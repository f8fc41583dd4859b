import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';

// Rendered with status 401 by unauthorized() (the operator console without a session).
export default function Unauthorized() {
  return (
    <main className="mx-auto max-w-md px-4 py-24 text-center">
      <h1 className="text-2xl font-semibold text-slate-900">Sign in required</h1>
      <p className="mt-2 text-sm text-slate-500">This page is for operators. Sign in with an admin account.</p>
      <Link href="/login?callbackUrl=%2Fadmin" className={buttonClass({ className: 'mt-6' })}>
        Sign in
      </Link>
    </main>
  );
}
