import type { HTMLAttributes } from 'react';
import { cn } from './cn';

type Tone = 'info' | 'warning' | 'error' | 'success';

const tones: Record<Tone, string> = {
  info: 'border-sky-200 bg-sky-50 text-sky-900',
  warning: 'border-amber-200 bg-amber-50 text-amber-900',
  error: 'border-red-200 bg-red-50 text-red-900',
  success: 'border-emerald-200 bg-emerald-50 text-emerald-900',
};

export function Alert({ tone = 'info', title, className, children, ...props }: HTMLAttributes<HTMLDivElement> & { tone?: Tone; title?: string }) {
  return (
    <div role={tone === 'error' ? 'alert' : 'status'} className={cn('rounded-md border px-4 py-3 text-sm', tones[tone], className)} {...props}>
      {title && <p className="font-medium">{title}</p>}
      {children && <div className={cn(title && 'mt-1 opacity-90')}>{children}</div>}
    </div>
  );
}
