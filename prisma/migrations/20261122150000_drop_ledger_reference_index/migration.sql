-- Usage entries are written one per request; nothing in the product looks entries up by reference
-- (the dashboard lists them by account and time), so this index only cost every insert.
-- DropIndex
DROP INDEX IF EXISTS "LedgerEntry_reference_idx";
