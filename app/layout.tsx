import type { Metadata } from 'next';
import './globals.css';

export const metadata: Metadata = {
  title: 'Model Gateway',
  description: 'One OpenAI-compatible endpoint for every model, with exact per-request billing.',
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen">{children}</body>
    </html>
  );
}
