'use client';

import { useLocale } from '@/lib/i18n/locale-context';
import type { Locale } from '@/lib/i18n/messages';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';

// Its own four phrases rather than the phrase book: this boundary is part of every dashboard
// page's JavaScript (decision 026). The same texts as lib/i18n/zh-phrases.ts.
const TEXT: Record<Locale, { title: string; later: string; reference: (digest: string) => string; retry: string }> = {
  en: { title: 'This page could not be loaded.', later: 'Try again in a moment.', reference: (d) => ` Reference: ${d}`, retry: 'Try again' },
  'zh-CN': { title: '此页面加载失败。', later: '请稍后重试。', reference: (d) => ` 参考编号：${d}`, retry: '重试' },
};

export default function DashboardError({ error, retry }: { error: unknown; retry: () => void }) {
  const t = TEXT[useLocale()] ?? TEXT.en;
  const digest = error instanceof Error ? (error as Error & { digest?: string }).digest : undefined;
  return (
    <Alert tone="error" title={t.title}>
      <p>
        {t.later}
        {digest ? t.reference(digest) : ''}
      </p>
      <Button variant="secondary" size="sm" className="mt-3" onClick={retry}>
        {t.retry}
      </Button>
    </Alert>
  );
}
