-- Per-key opt-in to the response cache (docs/decisions/036-reconciliation-and-caches.md).
ALTER TABLE "ApiKey" ADD COLUMN "responseCacheTtl" INTEGER;
