-- The job engine (lib/jobs): work that outlives a request (video generation, batches), claimed by
-- any instance with FOR UPDATE SKIP LOCKED, kept alive by heartbeats, taken over when they stop.
CREATE TABLE "Job" (
  "id" TEXT PRIMARY KEY,
  "kind" TEXT NOT NULL,
  "userId" UUID NOT NULL REFERENCES "User"("id") ON DELETE CASCADE,
  "apiKeyId" UUID,
  "model" TEXT,
  "status" TEXT NOT NULL DEFAULT 'queued',
  "cancelRequested" BOOLEAN NOT NULL DEFAULT false,
  "input" JSONB NOT NULL,
  "state" JSONB NOT NULL DEFAULT '{}',
  "result" JSONB,
  "error" JSONB,
  "progress" INTEGER NOT NULL DEFAULT 0,
  "retries" INTEGER NOT NULL DEFAULT 0,
  "claims" INTEGER NOT NULL DEFAULT 0,
  "maxRetries" INTEGER NOT NULL DEFAULT 3,
  "runAfter" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "owner" TEXT,
  "heartbeatAt" TIMESTAMPTZ,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "startedAt" TIMESTAMPTZ,
  "finishedAt" TIMESTAMPTZ,
  "expiresAt" TIMESTAMPTZ,
  "webhookDueAt" TIMESTAMPTZ,
  "webhookAttempts" INTEGER NOT NULL DEFAULT 0,
  "webhookDeliveredAt" TIMESTAMPTZ,
  "webhookError" TEXT
);
CREATE INDEX "Job_status_runAfter_idx" ON "Job" ("status", "runAfter");
CREATE INDEX "Job_userId_kind_createdAt_idx" ON "Job" ("userId", "kind", "createdAt" DESC);
CREATE INDEX "Job_webhookDueAt_idx" ON "Job" ("webhookDueAt") WHERE "webhookDueAt" IS NOT NULL;

-- Files of the Batch API (/v1/files): the uploaded JSONL and the output and error files.
CREATE TABLE "StoredFile" (
  "id" TEXT PRIMARY KEY,
  "userId" UUID NOT NULL REFERENCES "User"("id") ON DELETE CASCADE,
  "purpose" TEXT NOT NULL,
  "filename" TEXT NOT NULL,
  "bytes" INTEGER NOT NULL,
  "content" BYTEA NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "expiresAt" TIMESTAMPTZ
);
CREATE INDEX "StoredFile_userId_createdAt_idx" ON "StoredFile" ("userId", "createdAt" DESC);

-- One finished line of a batch: written once (its log row is already written), so a batch taken
-- over by another instance never runs it again.
CREATE TABLE "BatchLine" (
  "batchId" TEXT NOT NULL REFERENCES "Job"("id") ON DELETE CASCADE,
  "line" INTEGER NOT NULL,
  "ok" BOOLEAN NOT NULL,
  "output" TEXT NOT NULL,
  PRIMARY KEY ("batchId", "line")
);
