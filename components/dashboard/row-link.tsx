'use client';

import { useRouter } from 'next/navigation';
import type { MouseEvent, ReactNode } from 'react';
import { cn } from '@/components/ui/cn';

/**
 * A table row that opens `href` when clicked anywhere. A real link inside the row stays the
 * keyboard and middle-click path; clicks on links, buttons or a text selection are left alone.
 */
export function RowLink({ href, children, className, testId }: { href: string; children: ReactNode; className?: string; testId?: string }) {
  const router = useRouter();
  function onClick(e: MouseEvent<HTMLTableRowElement>) {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if ((e.target as HTMLElement).closest('a,button,input,select')) return;
    if (window.getSelection()?.toString()) return;
    router.push(href);
  }
  return (
    <tr onClick={onClick} data-testid={testId} data-href={href} className={cn('cursor-pointer align-top hover:bg-slate-50', className)}>
      {children}
    </tr>
  );
}
