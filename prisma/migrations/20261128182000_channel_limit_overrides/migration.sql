-- Per-channel limits set from the operator console (concurrency, tokens per minute), over the operator config's.
-- AlterTable
ALTER TABLE "ChannelOverride" ADD COLUMN "concurrency" INTEGER, ADD COLUMN "tpm" INTEGER;
