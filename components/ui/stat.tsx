import type { ReactNode } from 'react';
import { Card } from './card';

/** One headline figure with a label and a smaller line under it. */
export function Stat({ label, value, sub, action, testId }: { label: ReactNode; value: ReactNode; sub?: ReactNode; action?: ReactNode; testId?: string }) {
  return (
    <Card className="flex flex-col px-4 py-4 sm:px-5" data-testid={testId}>
      <div className="flex items-center justify-between gap-2">
        <p className="text-sm text-slate-500">{label}</p>
        {action}
      </div>
      <p className="mt-1.5 text-2xl font-semibold tracking-tight text-slate-900 tabular-nums">{value}</p>
      {sub && <p className="mt-1 text-sm text-slate-500 tabular-nums">{sub}</p>}
    </Card>
  );
}
