import { requireOperator } from './guard';
import { accountDetail, searchAccounts } from './accounts';
import { activeAnnouncement } from './announcements';
import { listAudit } from '@/lib/audit';
import { getAdminLog, listAdminLogs, parseAdminLogFilters } from './logs';
import { batchCodes, listBatches } from './redemption';
import { channelStates, overview } from './stats';
import { recordedUsage } from './reconcile';
import { ssoDomainViews, ssoProviderViews } from './sso';

// The operator console's page loaders. Each one checks the operator itself before its query, so
// no page can hand out data by forgetting the check or by rendering beside a layout that made it
// (Next renders layouts and pages in parallel). The /api/admin routes call requireAdmin instead;
// the CLI calls the libraries directly.

function guarded<A extends unknown[], R>(load: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    await requireOperator();
    return load(...args);
  };
}

export const consoleOverview = guarded(overview);
export const consoleChannels = guarded(channelStates);
export const consoleSearchAccounts = guarded(searchAccounts);
export const consoleAccountDetail = guarded(accountDetail);
export const consoleAudit = guarded(listAudit);
export const consoleAnnouncement = guarded(activeAnnouncement);
export const consoleBatches = guarded(listBatches);
export const consoleBatchCodes = guarded(batchCodes);
export const consoleLogFilters = guarded(parseAdminLogFilters);
export const consoleLogs = guarded(listAdminLogs);
export const consoleSsoProviders = guarded(async (req: Parameters<typeof ssoProviderViews>[0]) => ssoProviderViews(req));
export const consoleSsoDomains = guarded(ssoDomainViews);
export const consoleLog = guarded(getAdminLog);
// Reconciliation (lib/admin/reconcile.ts): the range parser is pure.
export const consoleRecordedUsage = guarded(recordedUsage);
export { reconcileRange } from './reconcile';
