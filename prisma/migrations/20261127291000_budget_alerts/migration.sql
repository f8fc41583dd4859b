-- Budget alerts: per-account thresholds and webhook, and the events they fire (one row per
-- idempotency id, so instances evaluating at once insert each event once).
-- CreateTable
CREATE TABLE "AlertSettings" (
    "userId" UUID NOT NULL,
    "webhookUrl" TEXT,
    "secret" TEXT NOT NULL,
    "thresholds" INTEGER[] DEFAULT ARRAY[50, 80, 100]::INTEGER[],
    "lowBalanceUsd" DECIMAL(24,12),
    "lowBalanceEpisode" INTEGER NOT NULL DEFAULT 0,
    "lowBalanceFired" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AlertSettings_pkey" PRIMARY KEY ("userId")
);

-- CreateTable
CREATE TABLE "AlertEvent" (
    "id" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMP(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3),
    "lastError" TEXT,
    "dismissedAt" TIMESTAMP(3),

    CONSTRAINT "AlertEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AlertEvent_userId_createdAt_idx" ON "AlertEvent"("userId", "createdAt");

-- The delivery loop's claim reads only events still due.
CREATE INDEX "AlertEvent_due_idx" ON "AlertEvent"("nextAttemptAt") WHERE "deliveredAt" IS NULL AND "nextAttemptAt" IS NOT NULL;

-- AddForeignKey
ALTER TABLE "AlertSettings" ADD CONSTRAINT "AlertSettings_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AlertEvent" ADD CONSTRAINT "AlertEvent_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
