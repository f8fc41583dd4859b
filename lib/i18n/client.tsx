'use client';

import { useContext, useMemo } from 'react';
import { LocaleContext } from './locale-context';
import { translator, type Translate } from './translate';

// Client components read the visitor's language from the root layout's I18nProvider
// (./locale-context.tsx), so no page has to thread strings through props.
export { I18nProvider, useLocale } from './locale-context';

export function useT(): Translate {
  const locale = useContext(LocaleContext);
  return useMemo(() => translator(locale), [locale]);
}
