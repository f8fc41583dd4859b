-- The operator console (issue 30): account roles, the audit log, runtime channel overrides,
-- redemption codes and dashboard announcements.

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('user', 'admin');

-- AlterTable
ALTER TABLE "User" ADD COLUMN "role" "Role" NOT NULL DEFAULT 'user';

-- CreateTable
CREATE TABLE "AuditLog" (
    "id" BIGSERIAL NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actorId" UUID,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "targetType" TEXT NOT NULL,
    "targetId" TEXT,
    "before" JSONB,
    "after" JSONB,
    "note" TEXT,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AuditLog_createdAt_idx" ON "AuditLog"("createdAt");
CREATE INDEX "AuditLog_targetType_targetId_createdAt_idx" ON "AuditLog"("targetType", "targetId", "createdAt");

-- Append-only: the database itself refuses to change or remove an audit row, whatever the code does.
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'AuditLog is append-only';
END;
$$;
CREATE TRIGGER "AuditLog_append_only" BEFORE UPDATE OR DELETE ON "AuditLog"
  FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();

-- CreateTable
CREATE TABLE "ChannelOverride" (
    "channelId" TEXT NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "weight" INTEGER,
    "reason" TEXT,
    "updatedBy" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChannelOverride_pkey" PRIMARY KEY ("channelId")
);

-- CreateTable
CREATE TABLE "RedemptionCode" (
    "id" UUID NOT NULL,
    "batchId" UUID NOT NULL,
    "hash" TEXT NOT NULL,
    "lastFour" TEXT NOT NULL,
    "amountUsd" DECIMAL(24,12) NOT NULL,
    "expiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,
    "redeemedAt" TIMESTAMP(3),
    "redeemedBy" UUID,
    "ledgerEntryId" BIGINT,

    CONSTRAINT "RedemptionCode_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "RedemptionCode_hash_key" ON "RedemptionCode"("hash");
CREATE INDEX "RedemptionCode_batchId_idx" ON "RedemptionCode"("batchId");

-- CreateTable
CREATE TABLE "Announcement" (
    "id" UUID NOT NULL,
    "message" TEXT NOT NULL,
    "level" TEXT NOT NULL DEFAULT 'info',
    "active" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,

    CONSTRAINT "Announcement_pkey" PRIMARY KEY ("id")
);

-- The console reads the request log across accounts by time (overview windows, channel health over
-- the last 5 minutes, the all-accounts log): without this each of those scans the whole table.
CREATE INDEX "RequestLog_createdAt_idx" ON "RequestLog"("createdAt");
