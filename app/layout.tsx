import type { Metadata } from 'next';
import { chosenTheme } from '@/lib/theme';
import { currentLocale } from '@/lib/i18n/server';
import { I18nProvider } from '@/lib/i18n/locale-context';
import './globals.css';

export const metadata: Metadata = {
  title: 'Model Gateway',
  description: 'One OpenAI-compatible endpoint for every model, with exact per-request billing.',
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const [theme, locale] = await Promise.all([chosenTheme(), currentLocale()]);
  return (
    <html lang={locale} data-theme={theme === 'system' ? undefined : theme}>
      <body className="min-h-screen">
        <I18nProvider locale={locale}>{children}</I18nProvider>
      </body>
    </html>
  );
}
