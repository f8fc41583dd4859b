-- Issue 45 (items 5 and 6). ImportRecord maps what `admin import` brought over from another
-- gateway's database to the rows it made here, so a second run finds them instead of duplicating.
-- LogExportState is the log export's cursor and lease (one row per sink, one instance delivers at a
-- time); LogExportReplay holds the replays of a time range asked for from the operator console.
CREATE TABLE "ImportRecord" (
    "source" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "targetId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ImportRecord_pkey" PRIMARY KEY ("source", "kind", "sourceId")
);

CREATE TABLE "LogExportState" (
    "id" TEXT NOT NULL,
    "cursorCreatedAt" TIMESTAMP(3),
    "cursorId" TEXT,
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMP(3),
    "lastSuccessAt" TIMESTAMP(3),
    "lastError" TEXT,
    "lastErrorAt" TIMESTAMP(3),
    "batches" BIGINT NOT NULL DEFAULT 0,
    "rows" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "LogExportState_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "LogExportReplay" (
    "id" UUID NOT NULL,
    "from" TIMESTAMP(3) NOT NULL,
    "to" TIMESTAMP(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "cursorCreatedAt" TIMESTAMP(3),
    "cursorId" TEXT,
    "batches" INTEGER NOT NULL DEFAULT 0,
    "rows" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),
    CONSTRAINT "LogExportReplay_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "LogExportReplay_status_createdAt_idx" ON "LogExportReplay"("status", "createdAt");
