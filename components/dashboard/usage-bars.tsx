import type { Translate } from '@/lib/i18n/translate';
import { formatAxisMoney, formatCount } from '@/lib/format';

export interface UsagePoint {
  date: string;
  /** Short axis label, e.g. "Nov 3". */
  label: string;
  /** Spend in USD as a number, for bar heights only; the labels carry the exact rounded text. */
  spend: number;
  spendLabel: string;
  cnyLabel: string;
  requests: number;
  failed: number;
  tokens: number;
}

/**
 * The overview's 30 days, drawn on the server: spend as bars, requests as a line, each day's
 * figures in its tooltip (title) and in the accessible name. No charting library reaches the
 * browser for it (decision 026: the overview's JavaScript halved); the usage page keeps recharts.
 */
export function UsageBars({ data, t }: { data: UsagePoint[]; t: Translate }) {
  const maxSpend = Math.max(0, ...data.map((d) => d.spend));
  const maxRequests = Math.max(0, ...data.map((d) => d.requests));
  const n = Math.max(1, data.length);
  // The line's points in a viewBox of n x 100, one per bar centre; 4 units of headroom at the top.
  const points = data.map((d, i) => `${i + 0.5},${maxRequests ? 100 - (d.requests / maxRequests) * 96 : 100}`).join(' ');
  const ticks = data.length > 2 ? [data[0], data[Math.floor(data.length / 2)], data[data.length - 1]] : data;
  const dayTitle = (d: UsagePoint) =>
    [
      `${d.date} (UTC)`,
      `${t('Spend')} ${d.spendLabel} (${d.cnyLabel})`,
      `${t('Requests')} ${formatCount(d.requests)}`,
      ...(d.failed ? [t('{n} failed', { n: formatCount(d.failed) })] : []),
      t('{n} tokens', { n: formatCount(d.tokens) }),
    ].join('\n');
  return (
    <figure className="w-full" data-testid="usage-chart">
      <div className="flex justify-between text-[11px] text-slate-600 tabular-nums" aria-hidden="true">
        <span>{formatAxisMoney(maxSpend)}</span>
        <span>{formatCount(maxRequests)}</span>
      </div>
      <div className="relative mt-1 h-52 border-b border-slate-300 sm:h-60">
        <ol className="flex h-full items-end gap-px sm:gap-1" aria-label={t('Daily spend and requests over the last 30 days')}>
          {data.map((d) => (
            <li key={d.date} className="flex h-full flex-1 items-end hover:bg-slate-100" title={dayTitle(d)}>
              <span className="sr-only">{dayTitle(d)}</span>
              <span
                className="block w-full rounded-t-sm bg-indigo-500"
                style={{ height: maxSpend ? `${(d.spend / maxSpend) * 100}%` : 0, minHeight: d.spend > 0 ? 1 : 0 }}
              />
            </li>
          ))}
        </ol>
        {maxRequests > 0 && (
          <svg
            className="pointer-events-none absolute inset-0 h-full w-full text-slate-900"
            viewBox={`0 0 ${n} 100`}
            preserveAspectRatio="none"
            aria-hidden="true"
          >
            <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.5} vectorEffect="non-scaling-stroke" strokeLinejoin="round" />
          </svg>
        )}
      </div>
      <div className="mt-1 flex justify-between text-[11px] text-slate-600" aria-hidden="true">
        {ticks.map((d) => (
          <span key={d.date}>{d.label}</span>
        ))}
      </div>
    </figure>
  );
}
