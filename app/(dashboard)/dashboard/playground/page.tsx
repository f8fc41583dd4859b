import type { Metadata } from 'next';
import { getConfig } from '@/lib/config';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageUser } from '@/lib/dashboard/session';
import { PageHeader } from '@/components/ui/page-header';
import { Playground } from '@/components/dashboard/playground';

export const metadata: Metadata = { title: 'Playground · Model Gateway' };

export default async function PlaygroundPage() {
  const user = await requirePageUser('/dashboard/playground');
  const account = await getAccount(user.id);
  const tier = account?.tier ?? 'free';
  const models = [...getConfig().models.values()].filter((m) => m.kind === 'chat' && m.protocol === 'openai' && m.tiers.has(tier)).map((m) => m.name);
  return (
    <>
      <PageHeader
        title="Playground"
        description="Send a chat request with one of your keys, as your code would: the reply, the cost headers and the latency. It is billed and logged like any request."
      />
      <Playground models={['service-auto', ...models]} />
    </>
  );
}
