'use client';

import dynamic from 'next/dynamic';

/**
 * The usage page's chart with its charting library (recharts, ~115 KB compressed) fetched only
 * when the chart renders, after the page's own code: the table below it works without it.
 */
export const LazyUsageBreakdownChart = dynamic(() => import('./usage-breakdown-chart').then((m) => m.UsageBreakdownChart), {
  ssr: false,
  loading: () => <div className="h-72 w-full rounded bg-slate-50" aria-hidden="true" />,
});
