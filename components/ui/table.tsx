import { Children, isValidElement, useId, type HTMLAttributes, type ReactNode, type TdHTMLAttributes, type ThHTMLAttributes } from 'react';
import { cn } from './cn';

/** The plain text of a header cell (strings and numbers, however nested); '' when it has none. */
function textOf(node: ReactNode): string {
  if (typeof node === 'string' || typeof node === 'number') return String(node);
  if (Array.isArray(node)) return node.map(textOf).join('');
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return '';
}

/** The column labels of a table's `THead` (its first row's cells, in order). */
function headerLabels(children: ReactNode): string[] {
  for (const child of Children.toArray(children)) {
    if (!isValidElement<{ children?: ReactNode }>(child) || child.type !== THead) continue;
    const row = Children.toArray(child.props.children).find((r) => isValidElement(r));
    if (!isValidElement<{ children?: ReactNode }>(row)) return [];
    return Children.toArray(row.props.children).map((cell) => textOf(cell).trim());
  }
  return [];
}

const cssString = (text: string) => `"${text.replace(/[\\"\n\r<>]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `)}"`;

/**
 * On phones the header row is hidden, so each stacked cell is preceded by its column's label: CSS
 * `::before` content keyed by column position, written here from the header's own (translated) text,
 * so no page labels its cells twice and no script runs for it.
 */
function StackLabels({ id, labels }: { id: string; labels: string[] }) {
  const rules = labels
    .map((label, i) =>
      label
        ? `[data-stack="${id}"]>tbody>tr>td:nth-child(${i + 1})::before{content:${cssString(label)};display:block;font-size:.6875rem;line-height:1rem;font-weight:500;text-transform:uppercase;letter-spacing:.025em;opacity:.7}`
        : '',
    )
    .join('');
  return rules ? <style>{`@media (max-width:639.98px){${rules}}`}</style> : null;
}

/**
 * A full-width table. Below `sm` (phones) its rows become stacked cards: the header row is hidden
 * and each row's cells flow and wrap, the first cell on a line of its own and the last (actions)
 * to the right, so no column and no button sits off-screen behind a sideways scroll. From `sm` up
 * it is a plain table that scrolls sideways if its columns need more room. Each stacked cell shows its
 * column's label above its value (StackLabels). `stack={false}` keeps
 * the table (and its sideways scroll) on phones too.
 */
export function Table({ className, stack = true, ...props }: HTMLAttributes<HTMLTableElement> & { stack?: boolean }) {
  const id = useId().replace(/[^a-zA-Z0-9_-]/g, '');
  return (
    <div className={cn('relative', stack ? 'sm:overflow-x-auto' : 'overflow-x-auto')}>
      {stack && <StackLabels id={id} labels={headerLabels(props.children)} />}
      <table
        data-stack={stack ? id : undefined}
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
