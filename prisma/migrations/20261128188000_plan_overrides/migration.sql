-- Plans edited in the console (issue 42 item 1; docs/decisions/047).
CREATE TABLE "PlanOverride" (
    "id" TEXT NOT NULL,
    "data" JSONB,
    "retired" BOOLEAN NOT NULL DEFAULT false,
    "updatedBy" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PlanOverride_pkey" PRIMARY KEY ("id")
);
