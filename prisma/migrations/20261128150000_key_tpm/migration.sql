-- Per-key tokens per minute (input + output), enforced with the key's other limits in the admission.
-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN "tpm" INTEGER;
