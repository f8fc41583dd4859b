'use client';

import { createContext, useContext, type ReactNode } from 'react';
import type { Locale } from './messages';

// The visitor's language for client components (set once in the root layout from the same
// cookie/Accept-Language the server reads). Apart from the translator (./client.tsx), so that a
// page without translated client components does not ship the phrase book (decision 026).
export const LocaleContext = createContext<Locale>('en');

export function I18nProvider({ locale, children }: { locale: Locale; children: ReactNode }) {
  return <LocaleContext.Provider value={locale}>{children}</LocaleContext.Provider>;
}

export function useLocale(): Locale {
  return useContext(LocaleContext);
}
