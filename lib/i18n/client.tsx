'use client';

import { createContext, useContext, useMemo, type ReactNode } from 'react';
import type { Locale } from './messages';
import { translator, type Translate } from './translate';
import { apiErrorText, apiFieldErrors, renderMessage, type ApiErrorJson } from './codes';

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

/**
 * Reads a failed dashboard-API answer (`res` already known not ok) into the reader's language:
 * `text` for the whole error, `fields` for each bad field of a form (lib/i18n/codes.ts).
 */
export function useApiError(): (res: Response, fallback?: string) => Promise<{ text: string; fields: Record<string, string> }> {
  const locale = useContext(LocaleContext);
  return useMemo(
    () => async (res, fallback) => {
      const body = (await res.json().catch(() => null)) as ApiErrorJson | null;
      const fields = apiFieldErrors(locale, body);
      // With the bad fields named beside them, the summary only points at them.
      const text =
        Object.keys(fields).length > 0 ? renderMessage(locale, { message_code: 'request.invalid_fields' }) : apiErrorText(locale, body, res.status, fallback);
      return { text, fields };
    },
    [locale],
  );
}
