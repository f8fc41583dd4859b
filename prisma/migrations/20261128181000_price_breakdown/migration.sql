-- Issue 44 item 4 (docs/decisions/043-price-breakdown-per-request.md): each request-log row keeps
-- how its cost was made (token class x rate = cost, the tier, every discount), as compact JSON the
-- batch writer fills from the same computation as the charge. On the partitioned log, a column added
-- to the parent reaches every day partition (and the DEFAULT one); rows written before stay NULL.
ALTER TABLE "RequestLog" ADD COLUMN "priceBreakdown" JSONB;

-- The catalogue mirror (lib/config/sync.ts) carries the whole price list of the operator config
-- (docs/decisions/035): the other token classes per million tokens, the long-context tier, the
-- service-tier multipliers, per-call tool prices and the Batch API discount.
ALTER TABLE "ModelPrice" ADD COLUMN "cacheWrite1hUsdPerM" DECIMAL(24,12);
ALTER TABLE "ModelPrice" ADD COLUMN "reasoningUsdPerM" DECIMAL(24,12);
ALTER TABLE "ModelPrice" ADD COLUMN "audioInputUsdPerM" DECIMAL(24,12);
ALTER TABLE "ModelPrice" ADD COLUMN "audioOutputUsdPerM" DECIMAL(24,12);
ALTER TABLE "ModelPrice" ADD COLUMN "imageInputUsdPerM" DECIMAL(24,12);
ALTER TABLE "ModelPrice" ADD COLUMN "imageOutputUsdPerM" DECIMAL(24,12);
ALTER TABLE "ModelPrice" ADD COLUMN "longContext" JSONB;
ALTER TABLE "ModelPrice" ADD COLUMN "serviceTierMultipliers" JSONB;
ALTER TABLE "ModelPrice" ADD COLUMN "toolUsdPerThousandCalls" JSONB;
ALTER TABLE "ModelPrice" ADD COLUMN "batchDiscountPercent" DECIMAL(9,6);
