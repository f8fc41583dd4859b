-- Responses kept for GET /v1/responses/{id} and previous_response_id (lib/gateway/responses-store.ts).
-- CreateTable
CREATE TABLE "StoredResponse" (
    "id" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "model" TEXT NOT NULL,
    "response" TEXT NOT NULL,
    "conversation" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "StoredResponse_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "StoredResponse_expiresAt_idx" ON "StoredResponse"("expiresAt");
