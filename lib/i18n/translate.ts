// Phrase-keyed translation for the pages that `messages.ts` does not structure: the English text is
// the key (so English output is the source, unchanged) and `zhPhrases` must hold every phrase a
// component asks for -- an untranslated phrase is a type error, not a silent English leak.
// `{name}` placeholders are filled from `vars`. Client-safe.

import type { Locale } from './messages';
import { zhPhrases } from './zh-phrases';
import { zhConsole } from './zh-console';
import { zhCaches } from './zh-caches';
import { zhPlans } from './zh-plans';
import { zhPrices } from './zh-prices';
import { zhSso } from './zh-sso';
import { zhProjects } from './zh-projects';
import { renderMessage, type CodedMessage } from './codes';

export type Phrase =
  | keyof typeof zhPhrases
  | keyof typeof zhConsole
  | keyof typeof zhCaches
  | keyof typeof zhPlans
  | keyof typeof zhPrices
  | keyof typeof zhSso
  | keyof typeof zhProjects;

// The operator console's phrases live in their own table (zh-console.ts); one lookup for both.
const zhAll: Record<string, string> = { ...zhProjects, ...zhSso, ...zhPrices, ...zhPlans, ...zhCaches, ...zhConsole, ...zhPhrases };
export type Translate = (phrase: Phrase, vars?: Record<string, string | number>) => string;

function fill(text: string, vars?: Record<string, string | number>): string {
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

const localeOfTranslator = new WeakMap<Translate, Locale>();

export function translator(locale: Locale): Translate {
  const table: Record<string, string> | null = locale === 'zh-CN' ? zhAll : null;
  const t: Translate = (phrase, vars) => fill(table?.[phrase] ?? phrase, vars);
  localeOfTranslator.set(t, locale);
  return t;
}

/** The language a translator speaks: for text that comes coded from the server (lib/i18n/codes.ts). */
export function localeOf(t: Translate): Locale {
  return localeOfTranslator.get(t) ?? 'en';
}

/** A server message (code and params, else its English text) in the translator's language. */
export function coded(t: Translate, m: CodedMessage | null | undefined, fallback = ''): string {
  return renderMessage(localeOf(t), m, fallback);
}

/** The sign-up rules' refusals (lib/auth/password-rules.ts, shared with the server) in the viewer's language. */
export function ruleProblem(problem: string, t: Translate): string {
  const min = /^Password must be at least (\d+) characters\.$/.exec(problem);
  if (min) return t('Password must be at least {n} characters.', { n: min[1] });
  const max = /^Password must be at most (\d+) characters\.$/.exec(problem);
  if (max) return t('Password must be at most {n} characters.', { n: max[1] });
  if (problem === 'This password is one of the most commonly used ones. Choose another: a few unrelated words work well.') return t(problem);
  if (problem === 'Enter a valid email address.') return t(problem);
  return problem;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** A chart's day label ("Nov 3", "11月3日") for a `YYYY-MM-DD` day. */
export function dayLabel(day: string, t: Translate): string {
  const month = MONTHS[Number(day.slice(5, 7)) - 1] ?? MONTHS[0];
  return t('{month} {day}', { month: t(month), day: Number(day.slice(8, 10)) });
}
