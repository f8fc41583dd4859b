import type { HTMLAttributes, TdHTMLAttributes, ThHTMLAttributes } from 'react';
import { cn } from './cn';

/**
 * A full-width table. Below `sm` (phones) its rows become stacked cards: the header row is hidden
 * and each row's cells flow and wrap, the first cell on a line of its own and the last (actions)
 * to the right, so no column and no button sits off-screen behind a sideways scroll. From `sm` up
 * it is a plain table that scrolls sideways if its columns need more room. `stack={false}` keeps
 * the table (and its sideways scroll) on phones too.
 */
export function Table({ className, stack = true, ...props }: HTMLAttributes<HTMLTableElement> & { stack?: boolean }) {
  return (
    <div className={cn('relative', stack ? 'sm:overflow-x-auto' : 'overflow-x-auto')}>
      <table
        className={cn(
          'w-full border-collapse text-left text-sm',
          stack &&
            'max-sm:block max-sm:[&>tbody]:block max-sm:[&>thead]:hidden max-sm:[&_tr]:flex max-sm:[&_tr]:flex-wrap max-sm:[&_tr]:items-center max-sm:[&_tr]:gap-x-3 max-sm:[&_tr]:px-4 max-sm:[&_tr]:py-2 max-sm:[&_td]:min-w-0 max-sm:[&_td]:max-w-full max-sm:[&_td]:whitespace-normal max-sm:[&_td]:break-words max-sm:[&_td]:px-0 max-sm:[&_td]:py-1 max-sm:[&_td:first-child]:basis-full max-sm:[&_td:last-child]:ml-auto',
          className,
        )}
        {...props}
      />
    </div>
  );
}

export function THead({ className, ...props }: HTMLAttributes<HTMLTableSectionElement>) {
  return <thead className={cn('border-b border-slate-200 bg-slate-50/70', className)} {...props} />;
}

export function TBody({ className, ...props }: HTMLAttributes<HTMLTableSectionElement>) {
  return <tbody className={cn('divide-y divide-slate-100', className)} {...props} />;
}

export function Tr({ className, ...props }: HTMLAttributes<HTMLTableRowElement>) {
  return <tr className={cn('align-top', className)} {...props} />;
}

export function Th({ className, ...props }: ThHTMLAttributes<HTMLTableCellElement>) {
  return <th scope="col" className={cn('whitespace-nowrap px-4 py-2.5 text-xs font-medium uppercase tracking-wide text-slate-500', className)} {...props} />;
}

export function Td({ className, ...props }: TdHTMLAttributes<HTMLTableCellElement>) {
  return <td className={cn('px-4 py-3 text-slate-700', className)} {...props} />;
}
