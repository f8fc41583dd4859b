// The limiter lives in lib/limits (billing and the account API use it too); kept here for the gateway's imports.
export { getLimiter } from '@/lib/limits/runtime';
export { balanceKey } from '@/lib/limits/keys';
