import { serverT } from '@/lib/i18n/server';
import type { Translate } from '@/lib/i18n/translate';
import type { Metadata } from 'next';
import { getConfig, type GatewayConfig, type ModelInfo, type TierName } from '@/lib/config';
import { usdToCny, usdToPico } from '@/lib/money';
import { getAccount } from '@/lib/dashboard/queries';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { formatMoney, int, tierLabel, tokenCount } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Card, CardHeader } from '@/components/ui/card';
import { CopyButton } from '@/components/ui/copy-button';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Models')} · Model Gateway` };
}

// Per-model caps bind free and pro accounts; higher tiers get their own, larger limits.
const cappedTiers: TierName[] = ['free', 'pro'];

/** Price per million tokens in USD and CNY, both exact (prices are short decimals). */
function Price({ usdPerMillion, config }: { usdPerMillion: string; config: GatewayConfig }) {
  const pico = usdToPico(usdPerMillion);
  return (
    <div className="tabular-nums">
      <div className="text-slate-900">{formatMoney(pico)}</div>
      <div className="text-xs text-slate-500">{formatMoney(usdToCny(pico, config.cnyRateNano), 'CNY')}</div>
    </div>
  );
}

/** Cache prices are per token in config; shown per million like the others. */
const perMillion = (picoPerToken: bigint) => formatMoney(picoPerToken * 1_000_000n);

function Limits({ model, tier, config, t }: { model: ModelInfo; tier: TierName; config: GatewayConfig; t: Translate }) {
  const lines: string[] = [];
  if (model.kind === 'embedding') {
    lines.push(`${int(config.limits.embeddings_rpm)} RPM`, t('{n} concurrent', { n: int(config.limits.embeddings_concurrency) }));
  } else if (cappedTiers.includes(tier)) {
    if (model.rpm) lines.push(`${int(model.rpm)} RPM`);
    if (model.concurrency) lines.push(t('{n} concurrent', { n: int(model.concurrency) }));
  }
  if (model.tpm) lines.push(t('{n} tokens/min', { n: int(model.tpm) }));
  if (model.platformDailyRequests) lines.push(t('{n} / day platform-wide', { n: int(model.platformDailyRequests) }));
  if (lines.length === 0) return <span className="text-slate-500">{t('Tier limits')}</span>;
  return (
    <div className="space-y-0.5 whitespace-nowrap tabular-nums">
      {lines.map((l) => (
        <div key={l}>{l}</div>
      ))}
    </div>
  );
}

/** The model's limits column (hidden on small screens). */
function LimitsCell(props: { model: ModelInfo; tier: TierName; config: GatewayConfig; t: Translate }) {
  return (
    <Td className="hidden md:table-cell">
      <Limits {...props} />
    </Td>
  );
}

/** The model's tags column (hidden below large screens); `toned` colours the speed and code tags. */
function TagsCell({ tags, toned = false }: { tags: string[]; toned?: boolean }) {
  return (
    <Td className="hidden lg:table-cell">
      <div className="flex flex-wrap gap-1">
        {tags.map((tag) => (
          <Badge key={tag} tone={toned ? (tag === 'fast' ? 'green' : tag === 'code' ? 'blue' : 'neutral') : undefined}>
            {tag}
          </Badge>
        ))}
      </div>
    </Td>
  );
}

function ModelName({ model, t }: { model: ModelInfo; t: Translate }) {
  return (
    <div className="flex items-start gap-1">
      <div className="min-w-0">
        <div className="font-mono text-[13px] font-medium text-slate-900">{model.name}</div>
        <div className="text-xs text-slate-600">
          {model.ownedBy}
          <span className="sm:hidden"> · {t('{n} context', { n: tokenCount(model.contextWindow) })}</span>
        </div>
      </div>
      <CopyButton value={model.name} label={t('Copy')} variant="ghost" className="-mt-1 h-7 px-2 text-xs text-slate-500" />
    </div>
  );
}

export default async function ModelsPage() {
  const user = await requirePageAccount('/dashboard/models');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const config = getConfig();
  const [account, t] = await Promise.all([getAccount(user.id), serverT()]);
  const tier: TierName = account?.tier ?? 'free';
  const all = [...config.models.values()];
  const allowed = all.filter((m) => m.tiers.has(tier));
  const chat = allowed.filter((m) => m.kind === 'chat');
  const embedding = allowed.filter((m) => m.kind === 'embedding');
  const locked = all.filter((m) => !m.tiers.has(tier));
  const embeddingTags = embedding.some((m) => m.tags.length > 0);
  const hasCachePrices = chat.some((m) => m.cacheReadPrice !== m.inputPrice || m.cacheWritePrice !== m.inputPrice);

  return (
    <>
      <PageHeader
        title={t('Models')}
        description={t('The {n} models your {tier} tier can call. Prices per million tokens; CNY at {rate} per USD.', {
          n: allowed.length,
          tier: tierLabel(tier),
          rate: config.usdToCny,
        })}
      />

      <Card>
        <CardHeader
          title={t('Chat')}
          description={
            <>
              POST /v1/chat/completions. {t('Use')} <code className="font-mono text-xs text-slate-700">service-auto</code> {t('to let the router pick.')}
            </>
          }
        />
        <Table>
          <THead>
            <tr>
              <Th>{t('Model')}</Th>
              <Th className="hidden text-right sm:table-cell">{t('Context')}</Th>
              <Th className="hidden text-right lg:table-cell">{t('Max output')}</Th>
              <Th className="text-right">{t('Input / 1M')}</Th>
              <Th className="text-right">{t('Output / 1M')}</Th>
              {hasCachePrices && <Th className="hidden text-right xl:table-cell">{t('Cache read / write')}</Th>}
              <Th className="hidden lg:table-cell">{t('Tags')}</Th>
              <Th className="hidden md:table-cell">{t('Limits')}</Th>
            </tr>
          </THead>
          <TBody>
            {chat.map((m) => (
              <Tr key={m.name} data-testid="model-row" data-model={m.name}>
                <Td>
                  <ModelName model={m} t={t} />
                </Td>
                <Td className="hidden text-right tabular-nums sm:table-cell">{tokenCount(m.contextWindow)}</Td>
                <Td className="hidden text-right tabular-nums lg:table-cell">{tokenCount(m.maxOutputTokens)}</Td>
                <Td className="text-right">
                  <Price usdPerMillion={m.inputUsdPerMillion} config={config} />
                </Td>
                <Td className="text-right">
                  <Price usdPerMillion={m.outputUsdPerMillion} config={config} />
                </Td>
                {hasCachePrices && (
                  <Td className="hidden whitespace-nowrap text-right tabular-nums xl:table-cell">
                    {m.cacheReadPrice !== m.inputPrice || m.cacheWritePrice !== m.inputPrice ? (
                      `${perMillion(m.cacheReadPrice)} / ${perMillion(m.cacheWritePrice)}`
                    ) : (
                      <span className="text-slate-500">—</span>
                    )}
                  </Td>
                )}
                <TagsCell tags={m.tags} toned />
                <LimitsCell model={m} tier={tier} config={config} t={t} />
              </Tr>
            ))}
          </TBody>
        </Table>
      </Card>

      {embedding.length > 0 && (
        <Card className="mt-4 sm:mt-6">
          <CardHeader title={t('Embeddings')} description={t('POST /v1/embeddings, up to 100 inputs per request.')} />
          <Table>
            <THead>
              <tr>
                <Th>{t('Model')}</Th>
                <Th className="hidden text-right sm:table-cell">{t('Dimensions')}</Th>
                <Th className="hidden text-right sm:table-cell">{t('Context')}</Th>
                <Th className="text-right">{t('Input / 1M')}</Th>
                {embeddingTags && <Th className="hidden lg:table-cell">{t('Tags')}</Th>}
                <Th className="hidden md:table-cell">{t('Limits')}</Th>
              </tr>
            </THead>
            <TBody>
              {embedding.map((m) => (
                <Tr key={m.name} data-testid="model-row" data-model={m.name}>
                  <Td>
                    <ModelName model={m} t={t} />
                  </Td>
                  <Td className="hidden text-right tabular-nums sm:table-cell">{m.dimensions ? int(m.dimensions) : '—'}</Td>
                  <Td className="hidden text-right tabular-nums sm:table-cell">{tokenCount(m.contextWindow)}</Td>
                  <Td className="text-right">
                    <Price usdPerMillion={m.inputUsdPerMillion} config={config} />
                  </Td>
                  {embeddingTags && <TagsCell tags={m.tags} />}
                  <LimitsCell model={m} tier={tier} config={config} t={t} />
                </Tr>
              ))}
            </TBody>
          </Table>
        </Card>
      )}

      {locked.length > 0 && (
        <p className="mt-4 text-sm text-slate-500">
          {t('On higher tiers:')}{' '}
          {locked.map((m, i) => (
            <span key={m.name}>
              {i > 0 && ', '}
              <span className="font-mono text-[13px] text-slate-700">{m.name}</span> ({[...m.tiers].map(tierLabel).join(', ')})
            </span>
          ))}
          .
        </p>
      )}
    </>
  );
}
