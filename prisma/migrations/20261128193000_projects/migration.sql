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
-- DEFAULT one); rows written before stay NULL (the rollup below carries the member for them).
ALTER TABLE "RequestLog" ADD COLUMN "projectId" UUID;
ALTER TABLE "RequestLog" ADD COLUMN "memberId" UUID;

-- The rollup gains the project (in its key: a key may move between projects) and the member who
-- made the key (fixed per key, so outside the key), filled from the keys for the rows already there.
ALTER TABLE "UsageDaily" ADD COLUMN "projectId" UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
ALTER TABLE "UsageDaily" ADD COLUMN "memberId" UUID;
ALTER TABLE "UsageDaily" DROP CONSTRAINT "UsageDaily_pkey";
ALTER TABLE "UsageDaily" ADD CONSTRAINT "UsageDaily_pkey" PRIMARY KEY ("userId","day","model","apiKeyId","projectId");
UPDATE "UsageDaily" u SET "memberId" = k."createdById" FROM "ApiKey" k WHERE k.id = u."apiKeyId" AND k."createdById" IS NOT NULL;
