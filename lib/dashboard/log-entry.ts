import type { LogRecord } from '@/lib/billing/writer';

/** One request-log row as the dashboard shows it: the row the writer stored, money in bigint pico units. */
export interface LogEntry extends Omit<LogRecord, 'userId' | 'attempts' | 'costPico' | 'costCnyPico' | 'billedTo'> {
  costUsd: bigint;
  costCny: bigint;
  /** 'plan' when the account's plan paid (lib/plans); null: the balance. */
  billedTo?: string | null;
}
