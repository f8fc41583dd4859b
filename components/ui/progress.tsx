import { cn } from './cn';

/** A thin bar; `value` is a fraction from 0 to 1. The track is slate-300: slate-100 is a card's own colour in dark mode. */
export function Progress({ value, label, className }: { value: number; label: string; className?: string }) {
  const pct = Math.max(0, Math.min(1, value)) * 100;
  return (
    <div
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(pct)}
      className={cn('h-2 w-full overflow-hidden rounded-full bg-slate-300', className)}
    >
      <div className="h-full rounded-full bg-indigo-500" style={{ width: `${pct}%` }} />
    </div>
  );
}
