-- Projects and spend by member (issue 41 item 4, docs/decisions/056). A project is a label in an
-- account with its own monthly budget and model allowlist; a key optionally belongs to one.
CREATE TABLE "Project" (
    "id" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "monthlyBudgetUsd" DECIMAL(24,12),
    "models" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "budgetVersion" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Project_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Project_userId_idx" ON "Project"("userId");
ALTER TABLE "Project" ADD CONSTRAINT "Project_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "ApiKey" ADD COLUMN "projectId" UUID;
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "Membership" ADD COLUMN "budgetVersion" INTEGER NOT NULL DEFAULT 0;

-- On the partitioned log, a column added to the parent reaches every day partition (and the
-- DEFAULT one); rows written before stay NULL (spend by member reads the keys' makers).
ALTER TABLE "RequestLog" ADD COLUMN "projectId" UUID;
ALTER TABLE "RequestLog" ADD COLUMN "memberId" UUID;

-- The project rollup (account x project x UTC day), written by the batch writer with the log rows.
-- A table of its own: UsageDaily's key stays as it is, so instances of the previous release keep
-- writing it (their ON CONFLICT names its columns) during a rolling upgrade. Spend by member needs
-- no rollup of its own: a key's member never changes (ApiKey.createdById).
CREATE TABLE "UsageDailyProject" (
    "userId" UUID NOT NULL,
    "day" DATE NOT NULL,
    "projectId" UUID NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,
    "failed" BIGINT NOT NULL DEFAULT 0,
    "promptTokens" BIGINT NOT NULL DEFAULT 0,
    "completionTokens" BIGINT NOT NULL DEFAULT 0,
    "costUsd" DECIMAL(24,12) NOT NULL DEFAULT 0,
    "costCny" DECIMAL(24,12) NOT NULL DEFAULT 0,
    CONSTRAINT "UsageDailyProject_pkey" PRIMARY KEY ("userId","day","projectId")
);
