-- Stored responses keep each turn's own messages and link to the turn before (issue 37): a chain no
-- longer stores every earlier turn again. Rows written before keep their whole conversation and no
-- link, and read as the start of their chain. The sizes serve the per-account quota and the bound
-- on a chain sent upstream without reading the texts; the output item ids of a natively served
-- response let its items be referenced by their owner only.
ALTER TABLE "StoredResponse" ADD COLUMN "previousId" TEXT;
ALTER TABLE "StoredResponse" ADD COLUMN "conversationBytes" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "StoredResponse" ADD COLUMN "responseBytes" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "StoredResponse" ADD COLUMN "itemIds" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
UPDATE "StoredResponse" SET "conversationBytes" = octet_length("conversation"), "responseBytes" = octet_length("response");

CREATE INDEX "StoredResponse_userId_createdAt_idx" ON "StoredResponse"("userId", "createdAt");
CREATE INDEX "StoredResponse_itemIds_idx" ON "StoredResponse" USING GIN ("itemIds");
