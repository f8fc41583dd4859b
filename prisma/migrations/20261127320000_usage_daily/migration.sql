-- The daily rollup of the request log (account x model x UTC day): requests (and failed ones:
-- outcome other than ok or client_closed, as the dashboard counts them), tokens, cost. The batch
-- writer (lib/billing/writer.ts) adds each batch's inserted rows in the same statement that inserts
-- them, so the rollup never disagrees with the log; readers of totals over days read it instead of
-- aggregating raw rows. Filled here from the rows already logged.
-- CreateTable
CREATE TABLE "UsageDaily" (
    "userId" UUID NOT NULL,
    "day" DATE NOT NULL,
    "model" TEXT NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,
    "failed" BIGINT NOT NULL DEFAULT 0,
    "promptTokens" BIGINT NOT NULL DEFAULT 0,
    "completionTokens" BIGINT NOT NULL DEFAULT 0,
    "costUsd" DECIMAL(24,12) NOT NULL DEFAULT 0,
    "costCny" DECIMAL(24,12) NOT NULL DEFAULT 0,

    CONSTRAINT "UsageDaily_pkey" PRIMARY KEY ("userId","day","model")
);

-- CreateIndex
CREATE INDEX "UsageDaily_day_idx" ON "UsageDaily"("day");

INSERT INTO "UsageDaily" ("userId","day","model","requests","failed","promptTokens","completionTokens","costUsd","costCny")
SELECT "userId", "createdAt"::date, COALESCE("modelServed", "modelRequested", ''), count(*),
       count(*) FILTER (WHERE "outcome" NOT IN ('ok', 'client_closed')),
       sum("promptTokens"), sum("completionTokens"), sum("costUsd"), sum("costCny")
FROM "RequestLog"
GROUP BY 1, 2, 3;
