import { CopyButton } from './copy-button';
import { cn } from './cn';

export function CodeBlock({ code, label, className }: { code: string; label?: string; className?: string }) {
  return (
    <div className={cn('relative rounded-lg bg-slate-950 text-slate-100', className)}>
      <div className="flex items-center justify-between border-b border-white/10 px-4 py-2">
        <span className="text-xs font-medium text-slate-400">{label}</span>
        <CopyButton value={code} variant="ghost" className="text-slate-100! hover:bg-white/10! hover:text-white!" />
      </div>
      <pre
        tabIndex={0}
        aria-label={label ? `${label} code` : 'Code'}
        className="overflow-x-auto px-4 py-3 text-[13px] leading-relaxed focus:outline-none focus-visible:ring-2 focus-visible:ring-indigo-400"
      >
        <code>{code}</code>
      </pre>
    </div>
  );
}
