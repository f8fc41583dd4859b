import { serverT } from '@/lib/i18n/server';
import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';
import { Logo } from '@/components/ui/logo';

export default async function NotFound() {
  const t = await serverT();
  return (
    <main className="flex min-h-screen flex-col items-center justify-center px-4 py-16 text-center" data-testid="not-found">
      <Link href="/" className="mb-8">
        <Logo />
      </Link>
      <p className="text-sm font-semibold text-indigo-700">404</p>
      <h1 className="mt-1 text-2xl font-semibold tracking-tight text-slate-900">{t('Page not found')}</h1>
      <p className="mt-2 max-w-md text-sm text-slate-600">{t('There is nothing at this address.')}</p>
      <div className="mt-6 flex flex-wrap justify-center gap-2">
        <Link href="/" className={buttonClass({ size: 'sm' })}>
          {t('Home')}
        </Link>
        <Link href="/dashboard" className={buttonClass({ variant: 'secondary', size: 'sm' })}>
          {t('Dashboard')}
        </Link>
      </div>
    </main>
  );
}
