import type { Metadata } from 'next';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageUser } from '@/lib/dashboard/session';
import { PageHeader } from '@/components/ui/page-header';
import { AccountSettings } from '@/components/dashboard/account-settings';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { ThemeSwitch } from '@/components/ui/theme-switch';
import { chosenTheme } from '@/lib/theme';

export const metadata: Metadata = { title: 'Settings · Model Gateway' };

export default async function SettingsPage() {
  const user = await requirePageUser('/dashboard/settings');
  const account = await getAccount(user.id);
  return (
    <>
      <PageHeader title="Settings" description={`Signed in as ${account?.email ?? user.email}.`} />
      <Card className="mb-4 sm:mb-6">
        <CardHeader title="Appearance" description="Follow the system's light or dark mode, or pick one for this browser." />
        <CardBody>
          <ThemeSwitch initial={await chosenTheme()} />
        </CardBody>
      </Card>
      <AccountSettings email={account?.email ?? user.email} />
    </>
  );
}
