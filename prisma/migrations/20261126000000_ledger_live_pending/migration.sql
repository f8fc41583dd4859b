-- Credits (recharge, admin credit, refund) are written to PostgreSQL first and then applied to the
-- live balance the gateway admits against (Redis, or the server's in-process limiter). An entry is
-- pending until that is done: the crediting process tries at once, and every running server drains
-- what is left (lib/billing/ledger.ts). Usage entries and every entry before this migration are not
-- pending (false): they were applied when written.
-- AlterTable
ALTER TABLE "LedgerEntry" ADD COLUMN "livePending" BOOLEAN NOT NULL DEFAULT false;

-- The reconcilers' query reads only the pending entries: a partial index, normally empty.
-- CreateIndex
CREATE INDEX "LedgerEntry_livePending_idx" ON "LedgerEntry"("id") WHERE "livePending";
