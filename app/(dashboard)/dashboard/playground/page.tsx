import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import { getConfig } from '@/lib/config';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { publicOrigin } from '@/lib/http/origin';
import { callableModels } from '@/lib/gateway/models';
import { PageHeader } from '@/components/ui/page-header';
import { Playground, type PlaygroundModel } from '@/components/dashboard/playground';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Playground')} · Model Gateway` };
}

export default async function PlaygroundPage() {
  const user = await requirePageAccount('/dashboard/playground');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const [account, { t }, baseUrl] = await Promise.all([getAccount(user.id), currentMessages(), publicOrigin()]);
  // The chat models of GET /v1/models for this account's tier, on every protocol (the playground calls them all through the OpenAI chat surface).
  const models: PlaygroundModel[] = callableModels(getConfig(), account?.tier ?? 'free')
    .filter((m) => m.kind === 'chat')
    .map((m) => ({ name: m.name, protocol: m.protocol, maxOutputTokens: m.maxOutputTokens }));
  return (
    <>
      <PageHeader title={t.pages.playground.title} description={t.pages.playground.description} />
      <Playground models={models} baseUrl={baseUrl} />
    </>
  );
}
