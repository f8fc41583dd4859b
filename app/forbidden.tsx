import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';

// Rendered with status 403 by forbidden() (the operator console for a non-admin account).
export default function Forbidden() {
  return (
    <main className="mx-auto max-w-md px-4 py-24 text-center">
      <h1 className="text-2xl font-semibold text-slate-900" data-testid="forbidden">
        Operators only
      </h1>
      <p className="mt-2 text-sm text-slate-500">Your account does not have the admin role.</p>
      <Link href="/dashboard" className={buttonClass({ variant: 'secondary', className: 'mt-6' })}>
        Back to the dashboard
      </Link>
    </main>
  );
}
