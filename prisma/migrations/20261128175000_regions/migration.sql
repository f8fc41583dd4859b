-- Regions (issue 43 item 4): the region that served each request, and region pins on accounts and keys.
ALTER TABLE "RequestLog" ADD COLUMN "region" TEXT;
ALTER TABLE "User" ADD COLUMN "region" TEXT;
ALTER TABLE "ApiKey" ADD COLUMN "region" TEXT;
