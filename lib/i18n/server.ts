import { cookies, headers } from 'next/headers';
import { localeFromAcceptLanguage, locales, messages, type Locale, type Messages } from './messages';
import { translator, type Translate } from './translate';

/** The visitor's language: the `lang` cookie (the switch), else the browser's Accept-Language. */
export async function currentLocale(): Promise<Locale> {
  const chosen = (await cookies()).get('lang')?.value;
  if (chosen && (locales as readonly string[]).includes(chosen)) return chosen as Locale;
  return localeFromAcceptLanguage((await headers()).get('accept-language'));
}

export async function currentMessages(): Promise<{ locale: Locale; t: Messages }> {
  const locale = await currentLocale();
  return { locale, t: messages[locale] };
}

/** The phrase translator for the visitor's language (see translate.ts). */
export async function serverT(): Promise<Translate> {
  return translator(await currentLocale());
}
