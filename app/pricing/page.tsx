import type { Metadata } from 'next';
import { getConfig, tierNames } from '@/lib/config';
import { usdToCny, usdToPico } from '@/lib/billing/money';
import { formatCount, formatPrice, formatTokenSize, formatWhole } from '@/lib/format';
import { tierLabel } from '@/lib/dashboard/format';
import { Badge } from '@/components/ui/badge';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { PublicShell } from '@/components/site/public-shell';

export const metadata: Metadata = { title: 'Pricing · Model Gateway', description: 'Per-token prices of every model in USD and CNY, and the limits of each tier.' };

export default async function PricingPage() {
  const config = getConfig();
  const models = [...config.models.values()];
  const price = (usdPerMillion: string) => {
    const pico = usdToPico(usdPerMillion);
    return (
      <div className="tabular-nums">
        <div className="text-slate-900">{formatPrice(pico)}</div>
        <div className="text-xs text-slate-600">{formatPrice(usdToCny(pico, config.cnyRateNano), 'CNY')}</div>
      </div>
    );
  };
  return (
    <PublicShell>
      <h1 className="text-3xl font-semibold tracking-tight text-slate-900">Pricing</h1>
      <p className="mt-2 max-w-2xl text-slate-600">
        Prepaid credit, charged per token at the prices below: no subscription, no minimum. Prices per million tokens; CNY at {config.usdToCny} per USD.
        Every response says what it cost in its <code className="font-mono text-sm">X-Service-Cost-USD</code> and <code className="font-mono text-sm">X-Service-Cost-CNY</code> headers.
      </p>

      <section aria-labelledby="models-title" className="mt-10">
        <h2 id="models-title" className="text-xl font-semibold tracking-tight text-slate-900">
          Models
        </h2>
        <div className="mt-4 overflow-hidden rounded-lg border border-slate-200">
          <Table>
            <THead>
              <tr>
                <Th>Model</Th>
                <Th className="hidden text-right sm:table-cell">Context</Th>
                <Th className="text-right">Input / 1M</Th>
                <Th className="text-right">Output / 1M</Th>
                <Th className="hidden md:table-cell">Tiers</Th>
              </tr>
            </THead>
            <TBody>
              {models.map((m) => (
                <Tr key={m.name} data-testid="pricing-row">
                  <Td>
                    <div className="font-mono text-[13px] font-medium text-slate-900">{m.name}</div>
                    <div className="text-xs text-slate-600">
                      {m.ownedBy} · {m.kind === 'embedding' ? 'embeddings' : 'chat'}
                      <span className="sm:hidden"> · {formatTokenSize(m.contextWindow)}</span>
                    </div>
                  </Td>
                  <Td className="hidden text-right tabular-nums sm:table-cell">{formatTokenSize(m.contextWindow)}</Td>
                  <Td className="text-right">{price(m.inputUsdPerMillion)}</Td>
                  <Td className="text-right">{m.kind === 'embedding' ? <span className="text-slate-600">—</span> : price(m.outputUsdPerMillion)}</Td>
                  <Td className="hidden md:table-cell">
                    <div className="flex flex-wrap gap-1">
                      {tierNames
                        .filter((t) => m.tiers.has(t))
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
          Tiers and limits
        </h2>
        <p className="mt-1 text-sm text-slate-600">Limits apply per account, across all its keys. Tiers move up automatically with monthly spend.</p>
        <div className="mt-4 overflow-hidden rounded-lg border border-slate-200">
          <Table>
            <THead>
              <tr>
                <Th>Tier</Th>
                <Th className="text-right">Req / min</Th>
                <Th className="hidden text-right sm:table-cell">Req / hour</Th>
                <Th className="text-right">Tokens / day</Th>
                <Th className="hidden text-right sm:table-cell">Concurrent</Th>
                <Th className="hidden md:table-cell">How to get it</Th>
              </tr>
            </THead>
            <TBody>
              {tierNames.map((name) => {
                const t = config.tiers[name];
                return (
                  <Tr key={name}>
                    <Td className="font-medium text-slate-900">{tierLabel(name)}</Td>
                    <Td className="text-right tabular-nums">{t.maxRpm > t.rpm ? `${formatCount(t.rpm)}–${formatCount(t.maxRpm)}` : formatCount(t.rpm)}</Td>
                    <Td className="hidden text-right tabular-nums sm:table-cell">{formatCount(t.rph)}</Td>
                    <Td className="text-right tabular-nums">{t.tokensPerDay === null ? 'Unlimited' : formatTokenSize(t.tokensPerDay)}</Td>
                    <Td className="hidden text-right tabular-nums sm:table-cell">
                      {t.maxConcurrency > t.concurrency ? `${formatCount(t.concurrency)}–${formatCount(t.maxConcurrency)}` : formatCount(t.concurrency)}
                    </Td>
                    <Td className="hidden text-slate-600 md:table-cell">
                      {name === 'free' ? 'Sign up' : t.promoteAtMonthlySpend !== null ? `Spend ${formatWhole(t.promoteAtMonthlySpend)} in a month` : 'Contact us'}
                    </Td>
                  </Tr>
                );
              })}
            </TBody>
          </Table>
        </div>
      </section>
    </PublicShell>
  );
}
