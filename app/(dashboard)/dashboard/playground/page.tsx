import { serverT } from '@/lib/i18n/server';
import { channelLabels } from '@/lib/channels/labels';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import { getConfig } from '@/lib/config';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageUser } from '@/lib/dashboard/session';
import { PageHeader } from '@/components/ui/page-header';
import { Playground } from '@/components/dashboard/playground';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Playground')} · Model Gateway` };
}

export default async function PlaygroundPage() {
  const user = await requirePageUser('/dashboard/playground');
  const [account, { t }] = await Promise.all([getAccount(user.id), currentMessages()]);
  const tier = account?.tier ?? 'free';
  const models = [...getConfig().models.values()].filter((m) => m.kind === 'chat' && m.protocol === 'openai' && m.tiers.has(tier)).map((m) => m.name);
  return (
    <>
      <PageHeader title={t.pages.playground.title} description={t.pages.playground.description} />
      <Playground models={['service-auto', ...models]} providers={channelLabels()} />
    </>
  );
}
