'use client';

import { useT } from '@/lib/i18n/client';
import { formatAxisMoney, formatCount } from '@/lib/format';
import { Bar, CartesianGrid, ComposedChart, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

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

const SPEND = '#6366f1';

const spendTick = (v: number) => formatAxisMoney(v);
const REQUESTS = '#0f172a';

function TooltipBody({ active, payload }: { active?: boolean; payload?: ReadonlyArray<{ payload?: UsagePoint }> }) {
  const t = useT();
  const point = payload?.[0]?.payload;
  if (!active || !point) return null;
  return (
    <div className="rounded-md border border-slate-200 bg-white px-3 py-2 text-xs shadow-md">
      <p className="mb-1 font-medium text-slate-900">{point.date} (UTC)</p>
      <p className="flex items-center gap-1.5 text-slate-600">
        <span className="h-2 w-2 rounded-sm" style={{ background: SPEND }} />
        {t('Spend')} <span className="ml-auto pl-3 font-medium text-slate-900 tabular-nums">{point.spendLabel}</span>
      </p>
      <p className="pl-3.5 text-right text-slate-500 tabular-nums">{point.cnyLabel}</p>
      <p className="flex items-center gap-1.5 text-slate-600">
        <span className="h-0.5 w-2" style={{ background: REQUESTS }} />
        {t('Requests')} <span className="ml-auto pl-3 font-medium text-slate-900 tabular-nums">{formatCount(point.requests)}</span>
      </p>
      {point.failed > 0 && <p className="pl-3.5 text-red-600 tabular-nums">{t('{n} failed', { n: formatCount(point.failed) })}</p>}
      <p className="pl-3.5 text-slate-500 tabular-nums">{t('{n} tokens', { n: formatCount(point.tokens) })}</p>
    </div>
  );
}

/** Daily spend (bars, left axis) and requests (line, right axis). */
export function UsageChart({ data }: { data: UsagePoint[] }) {
  const t = useT();
  return (
    <div className="h-64 w-full sm:h-72" role="img" aria-label={t('Daily spend and requests over the last 30 days')}>
      <ResponsiveContainer width="100%" height="100%">
        <ComposedChart data={data} margin={{ top: 8, right: 4, bottom: 0, left: -8 }} accessibilityLayer={false}>
          <CartesianGrid vertical={false} stroke="var(--color-slate-200)" />
          <XAxis
            dataKey="label"
            tickLine={false}
            axisLine={false}
            tick={{ fontSize: 11, fill: 'var(--color-slate-600)' }}
            interval="preserveStartEnd"
            minTickGap={16}
          />
          <YAxis
            yAxisId="spend"
            tickLine={false}
            axisLine={false}
            width={76}
            tick={{ fontSize: 11, fill: 'var(--color-slate-600)' }}
            tickFormatter={spendTick}
          />
          <YAxis
            yAxisId="requests"
            orientation="right"
            allowDecimals={false}
            tickLine={false}
            axisLine={false}
            width={40}
            tick={{ fontSize: 11, fill: 'var(--color-slate-600)' }}
          />
          <Tooltip content={<TooltipBody />} cursor={{ fill: 'var(--color-slate-100)' }} />
          <Bar yAxisId="spend" dataKey="spend" name={t('Spend (USD)')} fill={SPEND} radius={[3, 3, 0, 0]} maxBarSize={24} isAnimationActive={false} />
          <Line
            yAxisId="requests"
            dataKey="requests"
            name={t('Requests')}
            type="linear"
            stroke={REQUESTS}
            strokeWidth={1.5}
            dot={{ r: 2 }}
            isAnimationActive={false}
          />
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}
