import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';
import { Card } from '@/components/ui/card';

export default function DashboardNotFound() {
  return (
    <Card className="px-6 py-12 text-center" data-testid="not-found">
      <p className="text-sm font-semibold text-indigo-700">404</p>
      <h1 className="mt-1 text-xl font-semibold tracking-tight text-slate-900">Not found</h1>
      <p className="mx-auto mt-2 max-w-md text-sm text-slate-600">
        This page or record does not exist, or it belongs to another account. Request ids are listed on the Logs page.
      </p>
      <div className="mt-5 flex flex-wrap justify-center gap-2">
        <Link href="/dashboard" className={buttonClass({ size: 'sm' })}>
          Back to the overview
        </Link>
        <Link href="/dashboard/logs" className={buttonClass({ variant: 'secondary', size: 'sm' })}>
          Logs
        </Link>
      </div>
    </Card>
  );
}
