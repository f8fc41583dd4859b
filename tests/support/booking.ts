// What the cost tests check of every answer: the request log row and the usage ledger entry carry
// exactly the cost the client was told.
import { expect } from 'vitest';
import { getDb } from '@/lib/db';
import { waitFor } from './accounts';
import { pico } from './money';

/**
 * The log row and the usage ledger entry of a request carry exactly `costText` (a decimal USD text);
 * with `endpoint`, the row was logged under it; unless `tokens` is false, it counted prompt and
 * completion tokens. Answers the row.
 */
export async function expectBooked(requestId: string | null | undefined, costText: string, opts: { endpoint?: string; tokens?: boolean } = {}) {
  const db = await getDb();
  expect(requestId).toMatch(/^req_/);
  const cost = pico(costText);
  expect(cost).toBeGreaterThan(0n);
  const row = await waitFor(() => db.requestLog.findFirst({ where: { id: requestId! } }), 10_000);
  if (opts.endpoint !== undefined) expect(row.endpoint).toBe(opts.endpoint);
  expect(pico(row.costUsd.toFixed(12))).toBe(cost);
  if (opts.tokens !== false) {
    expect(row.promptTokens).toBeGreaterThan(0);
    expect(row.completionTokens).toBeGreaterThan(0);
  }
  const entry = await waitFor(() => db.ledgerEntry.findFirst({ where: { kind: 'usage', reference: requestId! } }), 10_000);
  expect(pico(entry.amountUsd.toFixed(12))).toBe(-cost);
  return row;
}
