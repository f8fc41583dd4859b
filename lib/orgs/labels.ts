import { localeOf, type Translate } from '@/lib/i18n/translate';
import type { OrgRole } from './roles';

// Role names have their own table: "Admin" and "Billing" already mean the console and the billing
// page in the phrase tables, and a role reads differently in Chinese (管理员, 财务).
const NAMES: Record<OrgRole, { en: string; zh: string }> = {
  owner: { en: 'Owner', zh: '所有者' },
  admin: { en: 'Admin', zh: '管理员' },
  developer: { en: 'Developer', zh: '开发者' },
  billing: { en: 'Billing', zh: '财务' },
};

/** A role's name in the reader's language (client-safe). */
export function roleLabel(role: OrgRole, t: Translate): string {
  return localeOf(t) === 'zh-CN' ? NAMES[role].zh : NAMES[role].en;
}
