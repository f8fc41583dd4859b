import { currentMessages, serverT } from '@/lib/i18n/server';
import { LanguageSwitch } from '@/components/ui/language-switch';
import type { ReactNode } from 'react';
import Link from 'next/link';
import { sessionUser } from '@/lib/dashboard/session';
import { ButtonLink } from '@/components/ui/button';
import { Logo } from '@/components/ui/logo';

/** Header and footer of the public pages (/pricing, /docs). */
export async function PublicShell({ children }: { children: ReactNode }) {
  const [user, t, { locale, t: m }] = await Promise.all([sessionUser(), serverT(), currentMessages()]);
  return (
    <div className="min-h-screen bg-white">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm"
      >
        {t('Skip to content')}
      </a>
      <header className="border-b border-slate-100">
        <div className="mx-auto flex h-14 max-w-6xl items-center gap-3 px-4 sm:px-6">
          <Link href="/" aria-label={t('Model Gateway home')}>
            <Logo />
          </Link>
          <nav aria-label={t('Site')} className="ml-auto flex items-center gap-1 sm:gap-2">
            <Link href="/pricing" className="px-2 text-sm text-slate-700 hover:text-slate-900">
              {t('Pricing')}
            </Link>
            <Link href="/docs" className="px-2 text-sm text-slate-700 hover:text-slate-900">
              {t('Docs')}
            </Link>
            {user ? (
              <ButtonLink href="/dashboard" size="sm">
                {t('Dashboard')}
              </ButtonLink>
            ) : (
              <ButtonLink href="/register" size="sm">
                {t('Sign up')}
              </ButtonLink>
            )}
            <LanguageSwitch locale={locale} label={m.language} className="hidden sm:flex" />
          </nav>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-6xl px-4 py-10 sm:px-6 sm:py-14">
        {children}
      </main>
    </div>
  );
}
