-- Sessions (JWTs) signed in before this instant are refused: "sign out everywhere", password change, deletion.
ALTER TABLE "User" ADD COLUMN "sessionsValidFrom" TIMESTAMP(3);
-- Set when the owner deleted the account; the row stays for the ledger, without personal data.
ALTER TABLE "User" ADD COLUMN "deletedAt" TIMESTAMP(3);
