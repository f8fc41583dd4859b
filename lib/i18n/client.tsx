'use client';

import { useContext, useMemo } from 'react';
import { LocaleContext } from './locale-context';
import { translator, type Translate } from './translate';
import { apiErrorText, apiFieldErrors, renderMessage, type ApiErrorJson } from './codes';

// Client components read the visitor's language from the root layout's I18nProvider
// (./locale-context.tsx), so no page has to thread strings through props.
export { I18nProvider, useLocale } from './locale-context';

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
