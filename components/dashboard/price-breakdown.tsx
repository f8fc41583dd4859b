import type { Phrase, Translate } from '@/lib/i18n/translate';
import type { priceBreakdownJson } from '@/lib/dashboard/serialize';
import { formatCount, formatMoneyText } from '@/lib/format';
import { VIDEO_SECONDS } from '@/lib/pricing/breakdown';
import { Badge } from '@/components/ui/badge';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

// A request's price breakdown (GET /api/logs/{id}'s `price_breakdown`, docs/decisions/043) as a
// small table: each token class x its rate = its cost, per-call tools, then each discount; the
// lines add up to the cost charged. Shared by the dashboard's log detail and the console's.

export type PriceBreakdownView = NonNullable<ReturnType<typeof priceBreakdownJson>>;

const classLabels: Record<string, Phrase> = {
  input: 'Input',
  output: 'Output',
  cache_read: 'Cache read',
  cache_write_5m: 'Cache write (5 min)',
  cache_write_1h: 'Cache write (1 h)',
  reasoning: 'Reasoning',
  audio_input: 'Audio input',
  audio_output: 'Audio output',
  image_input: 'Image input',
  image_output: 'Image output',
  web_search: 'Web search',
  web_fetch: 'Web fetch',
  code_execution: 'Code execution',
  code_interpreter: 'Code interpreter',
  file_search: 'File search',
  image_generation: 'Image generation',
  video_seconds: 'Video',
};

const label = (name: string, t: Translate) => (classLabels[name] ? t(classLabels[name]) : name);

function adjustmentLabel(kind: string, detail: string, t: Translate): string {
  switch (kind) {
    case 'service_tier':
      return t('Service tier {tier}', { tier: detail });
    case 'response_cache':
      return t('Response cache hit, billed at {fraction} of the price', { fraction: detail });
    case 'batch_discount':
      return t('Batch discount {percent} %', { percent: detail });
    case 'reservation_cap':
      return t('Capped at the amount reserved');
    default:
      return detail ? `${kind} ${detail}` : kind;
  }
}

export function PriceBreakdown({ breakdown, t }: { breakdown: PriceBreakdownView | null; t: Translate }) {
  if (!breakdown) return <p className="px-4 py-4 text-sm text-slate-500 sm:px-5">{t('No breakdown was recorded for this request.')}</p>;
  const usd = (v: string) => formatMoneyText(v, 'USD');
  const cny = (v: string) => formatMoneyText(v, 'CNY');
  const money = 'text-right tabular-nums whitespace-nowrap';
  // Adjustment and total rows leave the count and rate columns empty: hidden on phones, where each cell is labelled.
  return (
    <div data-testid="price-breakdown" data-tier={breakdown.tier}>
      <div className="flex flex-wrap items-center gap-2 px-4 pb-2 sm:px-5">
        <Badge tone={breakdown.tier === 'long_context' ? 'amber' : 'neutral'}>
          {breakdown.tier === 'long_context' ? t('Long-context tier') : t('Base prices')}
        </Badge>
        {breakdown.unpriced.length > 0 && (
          <span className="text-sm text-red-700" data-testid="price-unpriced">
            {t('No price of its own (billed at the rate of the class it is part of, or not at all): {classes}', {
              classes: breakdown.unpriced.map((c) => label(c, t)).join(', '),
            })}
          </span>
        )}
      </div>
      <Table>
        <THead>
          <tr>
            <Th>{t('Item')}</Th>
            <Th className="text-right">{t('Quantity')}</Th>
            <Th className="text-right">{t('Rate (USD)')}</Th>
            <Th className="text-right">{t('Rate (CNY)')}</Th>
            <Th className="text-right">{t('Cost (USD)')}</Th>
            <Th className="text-right">{t('Cost (CNY)')}</Th>
          </tr>
        </THead>
        <TBody>
          {breakdown.lines.map((l) => (
            <Tr key={l.class} data-testid="price-row" data-class={l.class}>
              <Td>
                {label(l.class, t)}
                {l.priced_as && <span className="block text-xs text-slate-500">{t('at the {class} rate', { class: label(l.priced_as, t) })}</span>}
              </Td>
              <Td className={money}>{formatCount(l.tokens)}</Td>
              <Td className={money}>
                {usd(l.rate_usd_per_million)} <span className="text-xs text-slate-500">{t('per 1M tokens')}</span>
              </Td>
              <Td className={money}>{cny(l.rate_cny_per_million)}</Td>
              <Td className={money} data-testid="price-row-usd">
                {usd(l.cost_usd)}
              </Td>
              <Td className={money}>{cny(l.cost_cny)}</Td>
            </Tr>
          ))}
          {breakdown.calls.map((c) => (
            <Tr key={c.tool} data-testid="price-row" data-class={c.tool}>
              <Td>{label(c.tool, t)}</Td>
              <Td className={money}>{c.tool === VIDEO_SECONDS ? t('{n} s', { n: formatCount(c.calls) }) : t('{n} calls', { n: formatCount(c.calls) })}</Td>
              <Td className={money}>
                {usd(c.rate_usd_per_call)} <span className="text-xs text-slate-500">{c.tool === VIDEO_SECONDS ? t('per second') : t('per call')}</span>
              </Td>
              <Td className={money}>{cny(c.rate_cny_per_call)}</Td>
              <Td className={money} data-testid="price-row-usd">
                {usd(c.cost_usd)}
              </Td>
              <Td className={money}>{cny(c.cost_cny)}</Td>
            </Tr>
          ))}
          {breakdown.adjustments.map((a, i) => (
            <Tr key={`adj${i}`} data-testid="price-adjustment" data-kind={a.kind}>
              <Td>{adjustmentLabel(a.kind, a.detail, t)}</Td>
              <Td className="max-sm:hidden" />
              <Td className="max-sm:hidden" />
              <Td className="max-sm:hidden" />
              <Td className={money} data-testid="price-row-usd">
                {usd(a.amount_usd)}
              </Td>
              <Td className={money}>{cny(a.amount_cny)}</Td>
            </Tr>
          ))}
          <Tr className="font-medium" data-testid="price-total">
            <Td className="text-slate-900">{t('Total')}</Td>
            <Td className="max-sm:hidden" />
            <Td className="max-sm:hidden" />
            <Td className="max-sm:hidden" />
            <Td className={`${money} text-slate-900`} data-testid="price-total-usd">
              {usd(breakdown.total_usd)}
            </Td>
            <Td className={`${money} text-slate-900`} data-testid="price-total-cny">
              {cny(breakdown.total_cny)}
            </Td>
          </Tr>
        </TBody>
      </Table>
    </div>
  );
}
