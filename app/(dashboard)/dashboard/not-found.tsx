import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { currentMessages } from '@/lib/i18n/server';

export default async function DashboardNotFound() {
  const { t } = await currentMessages();
  return (
    <Card className="px-6 py-12 text-center" data-testid="not-found">
      <p className="text-sm font-semibold text-indigo-700">404</p>
      <h1 className="mt-1 text-xl font-semibold tracking-tight text-slate-900">{t.notFound.title}</h1>
      <p className="mx-auto mt-2 max-w-md text-sm text-slate-600">{t.notFound.body}</p>
      <div className="mt-5 flex flex-wrap justify-center gap-2">
        <Link href="/dashboard" className={buttonClass({ size: 'sm' })}>
          {t.notFound.back}
        </Link>
        <Link href="/dashboard/logs" className={buttonClass({ variant: 'secondary', size: 'sm' })}>
          {t.nav.logs}
        </Link>
      </div>
    </Card>
  );
}
