import type { Metadata } from 'next';
import { getConfig } from '@/lib/config';
import { listKeysWithSpend } from '@/lib/keys/queries';
import { publicOrigin } from '@/lib/dashboard/origin';
import { requirePageUser } from '@/lib/dashboard/session';
import { CopyButton } from '@/components/ui/copy-button';
import { PageHeader } from '@/components/ui/page-header';
import { KeysManager } from '@/components/dashboard/keys-manager';

export const metadata: Metadata = { title: 'API keys · Model Gateway' };

export default async function KeysPage() {
  const user = await requirePageUser('/dashboard/keys');
  const [keys, origin] = await Promise.all([listKeysWithSpend(user.id), publicOrigin()]);
  const baseUrl = `${origin}/v1`;
  return (
    <>
      <PageHeader
        title="API keys"
        description="Send a key as Authorization: Bearer <key> (or x-api-key for the Anthropic mirror)."
        actions={
          <div className="flex items-center gap-2 rounded-md border border-slate-200 bg-white py-1 pl-3 pr-1 shadow-sm">
            <span className="text-xs text-slate-500">Base URL</span>
            <code className="font-mono text-xs text-slate-900" data-testid="base-url">
              {baseUrl}
            </code>
            <CopyButton value={baseUrl} variant="ghost" />
          </div>
        }
      />
      <KeysManager initialKeys={keys} models={[...getConfig().models.keys()]} />
    </>
  );
}
