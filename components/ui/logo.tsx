import { cn } from './cn';

export function Logo({ className }: { className?: string }) {
  return (
    <span className={cn('inline-flex items-center gap-2 font-semibold tracking-tight text-slate-900', className)}>
      <svg viewBox="0 0 24 24" aria-hidden="true" className="h-6 w-6">
        <rect width="24" height="24" rx="6" className="fill-slate-900" data-logo-square="" />
        {/* stroke-white, not "white": in dark mode the square turns light and the lines dark with it. */}
        <path d="M6 8h12M6 12h8M6 16h12" className="stroke-white" strokeWidth="2" strokeLinecap="round" data-logo-lines="" />
        <circle cx="17" cy="12" r="1.6" className="fill-indigo-400" />
      </svg>
      <span>Model Gateway</span>
    </span>
  );
}
