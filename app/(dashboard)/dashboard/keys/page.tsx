import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { getConfig } from '@/lib/config';
import { listKeysWithSpend } from '@/lib/keys/queries';
import { listProjects } from '@/lib/projects/queries';
import { getAccount } from '@/lib/dashboard/queries';
import { publicOrigin } from '@/lib/dashboard/origin';
import { requirePageUser } from '@/lib/dashboard/session';
import { CopyButton } from '@/components/ui/copy-button';
import { PageHeader } from '@/components/ui/page-header';
import { KeysManager } from '@/components/dashboard/keys-manager';
import type { BudgetGauge } from '@/components/dashboard/key-controls-form';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('API keys')} · Model Gateway` };
}

/** The model the first-call snippets use: the cheapest chat model the tier may use that has a channel. */
function sampleModel(tier: string): string {
  const cfg = getConfig();
  const chat = [...cfg.models.values()].filter((m) => m.kind === 'chat' && m.tiers.has(tier as never) && (cfg.channelsByModel.get(m.name)?.length ?? 0) > 0);
  chat.sort((a, b) => (a.inputPrice + a.outputPrice < b.inputPrice + b.outputPrice ? -1 : 1));
  return chat[0]?.name ?? 'gpt-4o-mini';
}

/** What one typical request of `model` costs (1,000 tokens in, 1,000 out), for the key form's budget hint. */
function typicalRequest(model: string): BudgetGauge | undefined {
  const m = getConfig().models.get(model);
  return m ? { model, picoPerRequest: (1000n * (m.inputPrice + m.outputPrice)).toString() } : undefined;
}

export default async function KeysPage() {
  const user = await requirePageUser('/dashboard/keys');
  const [keys, origin, account, t, projects] = await Promise.all([
    listKeysWithSpend(user.id),
    publicOrigin(),
    getAccount(user.id),
    serverT(),
    listProjects(user.id),
  ]);
  const baseUrl = `${origin}/v1`;
  const sample = sampleModel(account?.tier ?? 'free');
  return (
    <>
      <PageHeader
        title={t('API keys')}
        description={t('Send a key as Authorization: Bearer <key> (or x-api-key for the Anthropic mirror).')}
        actions={
          <div className="flex items-center gap-2 rounded-md border border-slate-200 bg-white py-1 pl-3 pr-1 shadow-sm">
            <span className="text-xs text-slate-500">{t('Base URL')}</span>
            <code className="font-mono text-xs text-slate-900" data-testid="base-url">
              {baseUrl}
            </code>
            <CopyButton value={baseUrl} variant="ghost" />
          </div>
        }
      />
      <KeysManager
        initialKeys={keys}
        models={[...getConfig().models.keys()]}
        baseUrl={baseUrl}
        sampleModel={sample}
        budgetGauge={typicalRequest(sample)}
        projects={projects.map((p) => ({ id: p.id, name: p.name }))}
      />
    </>
  );
}
