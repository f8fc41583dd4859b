import type { Metadata } from 'next';
import { chosenTheme } from '@/lib/theme';
import { currentLocale } from '@/lib/i18n/server';
import { I18nProvider } from '@/lib/i18n/locale-context';
import './globals.css';

export const metadata: Metadata = {
  title: 'Model Gateway',
  description: 'One OpenAI-compatible endpoint for every model, with exact per-request billing.',
  // Files in public/ (drawn once in icon.svg; scripts/make-icons.mjs renders the PNGs and the ICO).
  icons: {
    icon: [
      { url: '/icon.svg', type: 'image/svg+xml' },
      { url: '/favicon.ico', sizes: '16x16 32x32 48x48' },
    ],
    apple: '/apple-touch-icon.png',
  },
  manifest: '/manifest.webmanifest',
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
