import type { Metadata } from 'next';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageUser } from '@/lib/dashboard/session';
import { PageHeader } from '@/components/ui/page-header';
import { AccountSettings } from '@/components/dashboard/account-settings';

export const metadata: Metadata = { title: 'Settings · Model Gateway' };

export default async function SettingsPage() {
  const user = await requirePageUser('/dashboard/settings');
  const account = await getAccount(user.id);
  return (
    <>
      <PageHeader title="Settings" description={`Signed in as ${account?.email ?? user.email}.`} />
      <AccountSettings email={account?.email ?? user.email} />
    </>
  );
}
