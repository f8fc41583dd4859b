'use client';

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatAxisCount, formatAxisMoney } from '@/lib/format';

export interface BreakdownSeries {
  id: string;
  label: string;
  color: string;
}

export interface BreakdownPoint {
  date: string;
  label: string;
  /** Bar heights per series id (floats, for drawing only). */
  values: Record<string, number>;
  /** The figures shown in the tooltip per series id, formatted on the server. */
  texts: Record<string, string>;
  totalText: string;
}

function TooltipBody({ active, payload, series }: { active?: boolean; payload?: ReadonlyArray<{ payload?: BreakdownPoint }>; series: BreakdownSeries[] }) {
  const point = payload?.[0]?.payload;
  if (!active || !point) return null;
  const shown = series.filter((s) => point.texts[s.id] !== undefined);
  return (
    <div className="rounded-md border border-slate-200 bg-white px-3 py-2 text-xs shadow-md">
      <p className="mb-1 font-medium text-slate-900">
        {point.date} (UTC) · <span className="tabular-nums">{point.totalText}</span>
      </p>
      {shown.map((s) => (
        <p key={s.id} className="flex items-center gap-1.5 text-slate-600">
          <span className="h-2 w-2 shrink-0 rounded-sm" style={{ background: s.color }} />
          <span className="max-w-48 truncate">{s.label}</span>
          <span className="ml-auto pl-3 font-medium text-slate-900 tabular-nums">{point.texts[s.id]}</span>
        </p>
      ))}
    </div>
  );
}

/** Stacked daily bars, one colour per group. Decorative for assistive technology: the tables below carry the figures. */
export function UsageBreakdownChart({
  data,
  series,
  money,
  description,
}: {
  data: BreakdownPoint[];
  series: BreakdownSeries[];
  money: boolean;
  description: string;
}) {
  const rows = data.map((d) => ({ ...d, ...Object.fromEntries(series.map((s) => [`v_${s.id}`, d.values[s.id] ?? 0])) }));
  return (
    <div className="h-72 w-full" role="img" aria-label={description} data-testid="usage-chart">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} margin={{ top: 8, right: 4, bottom: 0, left: -8 }} accessibilityLayer={false}>
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
            tickLine={false}
            axisLine={false}
            width={76}
            allowDecimals={money}
            tick={{ fontSize: 11, fill: 'var(--color-slate-600)' }}
            tickFormatter={(v: number) => (money ? formatAxisMoney(v) : formatAxisCount(v))}
          />
          <Tooltip content={<TooltipBody series={series} />} cursor={{ fill: 'var(--color-slate-100)' }} />
          {series.length > 1 && <Legend wrapperStyle={{ fontSize: 12 }} iconSize={10} />}
          {series.map((s, i) => (
            <Bar
              key={s.id}
              dataKey={`v_${s.id}`}
              name={s.label}
              stackId="usage"
              fill={s.color}
              maxBarSize={28}
              radius={i === series.length - 1 ? [3, 3, 0, 0] : undefined}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
