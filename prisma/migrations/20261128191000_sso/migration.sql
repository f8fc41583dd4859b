-- Single sign-on (docs/decisions/052): identities linked from an identity provider, and the email
-- domains whose people an organization requires to sign in through SSO. Nothing existing changes.
CREATE TABLE "LinkedIdentity" (
    "provider" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "email" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "LinkedIdentity_pkey" PRIMARY KEY ("provider","subject"),
    CONSTRAINT "LinkedIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "LinkedIdentity_userId_idx" ON "LinkedIdentity"("userId");

-- The primary key makes a domain belong to one organization at most.
CREATE TABLE "SsoDomain" (
    "domain" TEXT NOT NULL,
    "orgId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SsoDomain_pkey" PRIMARY KEY ("domain"),
    CONSTRAINT "SsoDomain_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "SsoDomain_orgId_idx" ON "SsoDomain"("orgId");
