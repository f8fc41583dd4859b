-- The request log partitioned by UTC day (PostgreSQL declarative partitioning on "createdAt"), so
-- that old days are dropped whole (REQUEST_LOG_RETENTION_DAYS) and queries bounded in time read only
-- their days. A partitioned table's primary key must hold the partition key: ("id", "createdAt").
-- The batch writer inserts each row with its own request time, so a replayed row carries the same
-- key and still conflicts (lib/billing/writer.ts).
-- Day partitions are created ahead by the gateway (lib/db/partitions.ts, at start, hourly and in
-- `npm run db:migrate`); the DEFAULT partition takes any row of a day that has none yet, so no row
-- is ever refused for want of a partition. Prisma does not model partitioning: the schema describes
-- the parent table, this SQL makes it partitioned.
-- The existing rows are copied into one partition per day they cover (in this transaction: a large
-- log takes a while; the gateway waits for it before serving).

ALTER TABLE "RequestLog" RENAME TO "RequestLog_unpartitioned";
ALTER TABLE "RequestLog_unpartitioned" RENAME CONSTRAINT "RequestLog_pkey" TO "RequestLog_unpartitioned_pkey";
DROP INDEX "RequestLog_userId_createdAt_idx";
DROP INDEX "RequestLog_userId_apiKeyId_createdAt_idx";
DROP INDEX "RequestLog_createdAt_idx";

CREATE TABLE "RequestLog" (
    "id" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "userId" UUID NOT NULL,
    "apiKeyId" UUID,
    "endpoint" TEXT NOT NULL,
    "modelRequested" TEXT,
    "modelServed" TEXT,
    "channel" TEXT,
    "attempts" JSONB,
    "status" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "stream" BOOLEAN NOT NULL DEFAULT false,
    "promptTokens" INTEGER NOT NULL DEFAULT 0,
    "completionTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheReadTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheWriteTokens" INTEGER NOT NULL DEFAULT 0,
    "tokensEstimated" BOOLEAN NOT NULL DEFAULT false,
    "costUsd" DECIMAL(24,12) NOT NULL DEFAULT 0,
    "costCny" DECIMAL(24,12) NOT NULL DEFAULT 0,
    "cnyRate" DECIMAL(18,8) NOT NULL,
    "latencyMs" INTEGER NOT NULL,
    "firstTokenMs" INTEGER,
    "errorCode" TEXT,
    "routeReason" TEXT,

    CONSTRAINT "RequestLog_pkey" PRIMARY KEY ("id","createdAt")
) PARTITION BY RANGE ("createdAt");

CREATE INDEX "RequestLog_userId_createdAt_idx" ON "RequestLog"("userId", "createdAt");
CREATE INDEX "RequestLog_userId_apiKeyId_createdAt_idx" ON "RequestLog"("userId", "apiKeyId", "createdAt");
CREATE INDEX "RequestLog_createdAt_idx" ON "RequestLog"("createdAt");

CREATE TABLE "RequestLog_default" PARTITION OF "RequestLog" DEFAULT;

DO $$
DECLARE
  d date;
BEGIN
  FOR d IN SELECT DISTINCT "createdAt"::date FROM "RequestLog_unpartitioned" ORDER BY 1 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "RequestLog" FOR VALUES FROM (%L) TO (%L)',
                   'RequestLog_p' || to_char(d, 'YYYYMMDD'), d::timestamp, (d + 1)::timestamp);
  END LOOP;
END $$;

INSERT INTO "RequestLog" ("id","createdAt","userId","apiKeyId","endpoint","modelRequested","modelServed","channel","attempts","status","outcome","stream","promptTokens","completionTokens","cacheReadTokens","cacheWriteTokens","tokensEstimated","costUsd","costCny","cnyRate","latencyMs","firstTokenMs","errorCode","routeReason")
SELECT "id","createdAt","userId","apiKeyId","endpoint","modelRequested","modelServed","channel","attempts","status","outcome","stream","promptTokens","completionTokens","cacheReadTokens","cacheWriteTokens","tokensEstimated","costUsd","costCny","cnyRate","latencyMs","firstTokenMs","errorCode","routeReason"
FROM "RequestLog_unpartitioned";

DROP TABLE "RequestLog_unpartitioned";

-- The daily rollup gains the API key (the nil UUID for requests without one), so the usage report
-- grouped by key and each key's spend (budgets, the keys page, budget alerts) read rollups too, and
-- keep counting days the retention dropped. Rebuilt from the log, which still holds every row here.
ALTER TABLE "UsageDaily" DROP CONSTRAINT "UsageDaily_pkey";
ALTER TABLE "UsageDaily" ADD COLUMN "apiKeyId" UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
TRUNCATE "UsageDaily";
INSERT INTO "UsageDaily" ("userId","day","model","apiKeyId","requests","failed","promptTokens","completionTokens","costUsd","costCny")
SELECT "userId", "createdAt"::date, COALESCE("modelServed", "modelRequested", ''), COALESCE("apiKeyId", '00000000-0000-0000-0000-000000000000'), count(*),
       count(*) FILTER (WHERE "outcome" NOT IN ('ok', 'client_closed')),
       sum("promptTokens"), sum("completionTokens"), sum("costUsd"), sum("costCny")
FROM "RequestLog"
GROUP BY 1, 2, 3, 4;
ALTER TABLE "UsageDaily" ADD CONSTRAINT "UsageDaily_pkey" PRIMARY KEY ("userId","day","model","apiKeyId");
