import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { getConfig, tierNames } from '@/lib/config';
import { usdToCny, usdToPico } from '@/lib/money';
import { formatMoney, formatTokenSize } from '@/lib/format';
import { tierLabel } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { PublicShell } from '@/components/site/public-shell';
import { TierTable } from '@/components/site/tier-table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Pricing')} · Model Gateway`, description: t('Per-token prices of every model in USD and CNY, and the limits of each tier.') };
}

export default async function PricingPage() {
  const config = getConfig();
  const tr = await serverT();
  const models = [...config.models.values()];
  const price = (usdPerMillion: string) => {
    const pico = usdToPico(usdPerMillion);
    return (
      <div className="tabular-nums">
        <div className="text-slate-900">{formatMoney(pico)}</div>
        <div className="text-xs text-slate-600">{formatMoney(usdToCny(pico, config.cnyRateNano), 'CNY')}</div>
      </div>
    );
  };
  return (
    <PublicShell>
      <h1 className="text-3xl font-semibold tracking-tight text-slate-900">{tr('Pricing')}</h1>
      <p className="mt-2 max-w-2xl text-slate-600">
        {tr('Prepaid credit, charged per token at the prices below: no subscription, no minimum. Prices per million tokens; CNY at {rate} per USD.', {
          rate: config.usdToCny,
        })}{' '}
        {tr('Every response says what it cost in its')} <code className="font-mono text-sm">X-Service-Cost-USD</code> {tr('and')}{' '}
        <code className="font-mono text-sm">X-Service-Cost-CNY</code> {tr('headers.')}
      </p>

      <section aria-labelledby="models-title" className="mt-10">
        <h2 id="models-title" className="text-xl font-semibold tracking-tight text-slate-900">
          {tr('Models')}
        </h2>
        <div className="mt-4 overflow-hidden rounded-lg border border-slate-200">
          <Table>
            <THead>
              <tr>
                <Th>{tr('Model')}</Th>
                <Th className="hidden text-right sm:table-cell">{tr('Context')}</Th>
                <Th className="text-right">{tr('Input / 1M')}</Th>
                <Th className="text-right">{tr('Output / 1M')}</Th>
                <Th className="hidden md:table-cell">{tr('Tiers')}</Th>
              </tr>
            </THead>
            <TBody>
              {models.map((md) => (
                <Tr key={md.name} data-testid="pricing-row">
                  <Td>
                    <div className="font-mono text-[13px] font-medium text-slate-900">{md.name}</div>
                    <div className="text-xs text-slate-600">
                      {md.ownedBy} · {md.kind === 'embedding' ? tr('embeddings') : md.kind === 'video' ? tr('video') : tr('chat')}
                      <span className="sm:hidden"> · {formatTokenSize(md.contextWindow)}</span>
                    </div>
                  </Td>
                  <Td className="hidden text-right tabular-nums sm:table-cell">{formatTokenSize(md.contextWindow)}</Td>
                  {md.kind === 'video' ? (
                    // A video model is priced per second of video (docs/decisions/037), not per token.
                    <Td className="text-right" colSpan={2}>
                      {tr('{price} per second of video', { price: formatMoney(md.videoPricePerSecond ?? 0n) })}
                    </Td>
                  ) : (
                    <>
                      <Td className="text-right">{price(md.inputUsdPerMillion)}</Td>
                      <Td className="text-right">{md.kind === 'embedding' ? <span className="text-slate-600">—</span> : price(md.outputUsdPerMillion)}</Td>
                    </>
                  )}
                  <Td className="hidden md:table-cell">
                    <div className="flex flex-wrap gap-1">
                      {tierNames
                        .filter((t) => md.tiers.has(t))
                        .map((t) => (
                          <Badge key={t} tone="neutral">
                            {tierLabel(t)}
                          </Badge>
                        ))}
                    </div>
                  </Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        </div>
      </section>

      <section aria-labelledby="tiers-title" className="mt-12">
        <h2 id="tiers-title" className="text-xl font-semibold tracking-tight text-slate-900">
          {tr('Tiers and limits')}
        </h2>
        <p className="mt-1 text-sm text-slate-600">{tr('Limits apply per account, across all its keys. Tiers move up automatically with monthly spend.')}</p>
        <div className="mt-4 overflow-hidden rounded-lg border border-slate-200">
          <TierTable responsive />
        </div>
      </section>
    </PublicShell>
  );
}
