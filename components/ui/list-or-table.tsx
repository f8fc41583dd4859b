import type { ReactNode } from 'react';

/**
 * The same rows twice, laid out for the screen: a list of cards (`items`, the `<li>`s) below `sm`,
 * `table` from `sm` up.
 */
export function ListOrTable({ label, items, table }: { label: string; items: ReactNode; table: ReactNode }) {
  return (
    <>
      <ul className="divide-y divide-slate-100 sm:hidden" aria-label={label}>
        {items}
      </ul>
      <div className="hidden sm:block">{table}</div>
    </>
  );
}
