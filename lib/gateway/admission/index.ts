// Admission of /v1 requests, by concern: the limit rules (rules.ts), the x-ratelimit headers
// (headers.ts), deny markers (deny.ts), the admission itself in one limiter call (admit.ts), the
// room readings that let it run alongside the upstream call (speculation.ts), and the leases it
// holds until released (lease.ts).
export type { Endpoint } from '@/lib/gateway/admission/rules';
export { checkDenied } from '@/lib/gateway/admission/deny';
export { countRefused, startAdmission, type AdmissionRequest, type PendingAdmission } from '@/lib/gateway/admission/admit';
export { expireLeases, release, type Admission } from '@/lib/gateway/admission/lease';
