import type { Resource } from './route';
import { account } from './account';
import { alerts } from './alerts';
import { auth } from './auth';
import { invitations } from './invitations';
import { jobs } from './jobs';
import { keys } from './keys';
import { ledger } from './ledger';
import { logs } from './logs';
import { ops } from './ops';
import { orgs } from './orgs';
import { payment } from './payment';
import { plan } from './plan';
import { playground } from './playground';
import { projects } from './projects';
import { statements } from './statements';
import { usage } from './usage';
import { v1 } from './v1';
import { adminAccounts } from './admin/accounts';
import { adminAnnouncements } from './admin/announcements';
import { adminAudit } from './admin/audit';
import { adminChannels } from './admin/channels';
import { adminCodes } from './admin/codes';
import { adminLogExport } from './admin/log-export';
import { adminLogs } from './admin/logs';
import { adminOverview } from './admin/overview';
import { adminPlans } from './admin/plans';
import { adminReconciliation } from './admin/reconciliation';
import { adminSso } from './admin/sso';

// Every resource of the API, by its OpenAPI tag. A new route goes into its resource's file; a new
// resource is a new file here and one line below (docs/decisions/064). tests/unit/openapi.test.ts
// fails for a route file in app/ whose method and path no resource declares.

export const resources: Record<string, Resource> = {
  gateway: v1,
  auth,
  account,
  keys,
  logs,
  usage,
  ledger,
  statements,
  payment,
  plan,
  alerts,
  orgs,
  projects,
  invitations,
  jobs,
  playground,
  ops,
  'admin/accounts': adminAccounts,
  'admin/announcements': adminAnnouncements,
  'admin/audit': adminAudit,
  'admin/channels': adminChannels,
  'admin/codes': adminCodes,
  'admin/log-export': adminLogExport,
  'admin/logs': adminLogs,
  'admin/overview': adminOverview,
  'admin/plans': adminPlans,
  'admin/sso': adminSso,
  'admin/reconciliation': adminReconciliation,
};
