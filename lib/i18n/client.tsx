'use client';

import { createContext, useContext, useMemo, type ReactNode } from 'react';
import type { Locale } from './messages';
import { translator, type Translate } from './translate';

// Client components read the visitor's language from here (set once in the root layout from the
// same cookie/Accept-Language the server reads), so no page has to thread strings through props.
const LocaleContext = createContext<Locale>('en');

export function I18nProvider({ locale, children }: { locale: Locale; children: ReactNode }) {
  return <LocaleContext.Provider value={locale}>{children}</LocaleContext.Provider>;
}

export function useLocale(): Locale {
  return useContext(LocaleContext);
}

export function useT(): Translate {
  const locale = useContext(LocaleContext);
  return useMemo(() => translator(locale), [locale]);
}
