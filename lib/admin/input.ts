// The console's routes read their bodies through the route schemas' reader (lib/http/validate.ts);
// these names stay for the callers that import them from here.
export { readBody } from '@/lib/http/validate';
export { usdAmount } from '@/lib/schemas/route';
