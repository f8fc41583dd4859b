'use client';

import { useRouter } from 'next/navigation';
import type { Locale } from '@/lib/i18n/messages';

/** English or 简体中文; remembered in the `lang` cookie the server reads. */
export function LanguageSwitch({ locale, label, className }: { locale: Locale; label: string; className?: string }) {
  const router = useRouter();
  return (
    <label className={`items-center text-sm text-slate-600 ${className ?? 'flex'}`}>
      <span className="sr-only">{label}</span>
      <select
        value={locale}
        onChange={(e) => {
          document.cookie = `lang=${e.target.value}; path=/; max-age=31536000; samesite=lax`;
          router.refresh();
        }}
        className="h-8 rounded-md border border-slate-200 bg-white px-1.5 text-xs text-slate-700"
        data-testid="language-switch"
      >
        <option value="en">English</option>
        <option value="zh-CN">简体中文</option>
      </select>
    </label>
  );
}
