import type { Metadata } from 'next';
import { chosenTheme } from '@/lib/theme';
import './globals.css';

export const metadata: Metadata = {
  title: 'Model Gateway',
  description: 'One OpenAI-compatible endpoint for every model, with exact per-request billing.',
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const theme = await chosenTheme();
  return (
    <html lang="en" data-theme={theme === 'system' ? undefined : theme}>
      <body className="min-h-screen">{children}</body>
    </html>
  );
}
