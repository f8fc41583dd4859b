-- Per-key controls: budgets (lifetime, monthly), model allowlist, rate limits, client address
-- ranges, expiry, and the version that invalidates cached copies after an edit.
-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN "budgetUsd" DECIMAL(24,12),
ADD COLUMN "monthlyBudgetUsd" DECIMAL(24,12),
ADD COLUMN "models" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "rpm" INTEGER,
ADD COLUMN "concurrency" INTEGER,
ADD COLUMN "allowedIps" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "expiresAt" TIMESTAMP(3),
ADD COLUMN "controlsVersion" INTEGER NOT NULL DEFAULT 0;
