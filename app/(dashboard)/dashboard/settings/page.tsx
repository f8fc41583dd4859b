import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import { LanguageSwitch } from '@/components/ui/language-switch';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageUser } from '@/lib/dashboard/session';
import { PageHeader } from '@/components/ui/page-header';
import { AccountSettings } from '@/components/dashboard/account-settings';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { ThemeSwitch } from '@/components/ui/theme-switch';
import { chosenTheme } from '@/lib/theme';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Settings')} · Model Gateway` };
}

export default async function SettingsPage() {
  const user = await requirePageUser('/dashboard/settings');
  const [account, { locale, t }] = await Promise.all([getAccount(user.id), currentMessages()]);
  return (
    <>
      <PageHeader title={t.pages.settings.title} description={`${t.pages.settings.signedInAs} ${account?.email ?? user.email}`} />
      <Card className="mb-4 sm:mb-6">
        <CardHeader title={t.pages.settings.appearance} description={t.pages.settings.appearanceHint} />
        <CardBody className="flex flex-wrap gap-3">
          <ThemeSwitch initial={await chosenTheme()} labels={t.theme} />
          <LanguageSwitch locale={locale} label={t.language} />
        </CardBody>
      </Card>
      <AccountSettings email={account?.email ?? user.email} />
    </>
  );
}
