-- Request-log rows the database refused even in their minimal form (lib/billing/writer.ts), kept
-- with the error so an operator can see them; the writer never blocks on them.
-- CreateTable
CREATE TABLE "RequestLogRejected" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "costUsd" TEXT NOT NULL,
    "row" TEXT NOT NULL,
    "error" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RequestLogRejected_pkey" PRIMARY KEY ("id")
);
