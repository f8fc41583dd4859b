import type { ReactNode } from 'react';
import { ListOrTable } from '@/components/ui/list-or-table';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

// The money history of the billing page (the ledger) and of a monthly statement (its transactions):
// cards on a phone, a table of date, type, details, amount and balance after from `sm` up.

export interface MoneyHistoryEntry {
  key: string;
  /** The row's and card's data attributes besides their test id (e.g. data-kind). */
  rowData: Record<`data-${string}`, string>;
  cardData: Record<`data-${string}`, string>;
  badge: ReactNode;
  amount: ReactNode;
  /** A colour class for the amount, or none. */
  amountTone?: string;
  cardDate: ReactNode;
  /** Right of the date on a card. */
  cardAside: ReactNode;
  /** The card's third line; none when empty. */
  note: string | null | undefined;
  /** Under the note on a card. */
  cardFooter?: ReactNode;
  tableDate: ReactNode;
  /** The details cell's text, and its tooltip. */
  details: string;
  detailsTitle?: string;
  /** Under the details text in the table. */
  links: ReactNode;
  balance: ReactNode;
}

export function MoneyHistory({
  label,
  head,
  entries,
  cardTestId,
  rowTestId,
  wrapAside = false,
}: {
  label: string;
  head: { date: string; type: string; details: string; amount: string; balance: string };
  entries: MoneyHistoryEntry[];
  cardTestId: string;
  rowTestId: string;
  /** Lets a card's date line wrap its aside under the date. */
  wrapAside?: boolean;
}) {
  const tone = (e: MoneyHistoryEntry) => (e.amountTone ? ` ${e.amountTone}` : '');
  return (
    <ListOrTable
      label={label}
      items={entries.map((e) => (
        <li key={e.key} className="px-4 py-3" data-testid={cardTestId} {...e.cardData}>
          <div className="flex items-center justify-between gap-3">
            {e.badge}
            <span className={`font-medium tabular-nums${tone(e)}`}>{e.amount}</span>
          </div>
          <div
            className={
              wrapAside
                ? 'mt-1 flex flex-wrap items-baseline justify-between gap-x-3 text-sm text-slate-600'
                : 'mt-1 flex items-baseline justify-between gap-3 text-sm text-slate-600'
            }
          >
            <span className="tabular-nums">{e.cardDate}</span>
            {e.cardAside}
          </div>
          {e.note && <p className="mt-0.5 truncate text-xs text-slate-600">{e.note}</p>}
          {e.cardFooter}
        </li>
      ))}
      table={
        <Table>
          <THead>
            <tr>
              <Th>{head.date}</Th>
              <Th>{head.type}</Th>
              <Th>{head.details}</Th>
              <Th className="text-right">{head.amount}</Th>
              <Th className="text-right">{head.balance}</Th>
            </tr>
          </THead>
          <TBody>
            {entries.map((e) => (
              <Tr key={e.key} data-testid={rowTestId} {...e.rowData}>
                <Td className="whitespace-nowrap tabular-nums">{e.tableDate}</Td>
                <Td>{e.badge}</Td>
                <Td className="max-w-72 text-slate-500" title={e.detailsTitle}>
                  <span className="block truncate">{e.details}</span>
                  {e.links}
                </Td>
                <Td className={`whitespace-nowrap text-right tabular-nums${tone(e)}`}>{e.amount}</Td>
                <Td className="whitespace-nowrap text-right tabular-nums">{e.balance}</Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      }
    />
  );
}
