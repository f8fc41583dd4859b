// Organization roles and what each may do (docs/decisions/040). Pure and client-safe: the API guard
// (lib/orgs/access.ts), the page guard and the dashboard's own menus read this one table.

export const ORG_ROLES = ['owner', 'admin', 'developer', 'billing'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

export function isOrgRole(value: unknown): value is OrgRole {
  return typeof value === 'string' && (ORG_ROLES as readonly string[]).includes(value);
}

const ALL: readonly OrgRole[] = ORG_ROLES;
const MANAGE: readonly OrgRole[] = ['owner', 'admin'];
const MONEY_READ: readonly OrgRole[] = ['owner', 'admin', 'billing'];
const MONEY_WRITE: readonly OrgRole[] = ['owner', 'billing'];
const KEYS: readonly OrgRole[] = ['owner', 'admin', 'developer'];

/**
 * `/api/...` routes acting on the selected organization's account, by method and path. A route not
 * listed is the owner's only: a new route is closed to members until it is added here.
 * `own` marks the routes a developer may use on their own keys only (checked by access.ts).
 */
interface ApiRule {
  method: string | '*';
  path: RegExp;
  roles: readonly OrgRole[];
  own?: 'key-param' | 'key-id' | 'log-id' | 'key-list';
}

export const API_RULES: readonly ApiRule[] = [
  { method: 'GET', path: /^\/api\/me$/, roles: ALL },
  { method: 'GET', path: /^\/api\/usage(\/export)?$/, roles: MONEY_READ },
  { method: 'GET', path: /^\/api\/ledger$/, roles: MONEY_READ },
  { method: 'GET', path: /^\/api\/(statements|receipts)\/[^/]+$/, roles: MONEY_READ },
  { method: 'POST', path: /^\/api\/payment\/(recharge|redeem)$/, roles: MONEY_WRITE },
  { method: 'GET', path: /^\/api\/plan$/, roles: ALL },
  { method: 'POST', path: /^\/api\/plan(\/(checkout|portal))?$/, roles: MONEY_WRITE },
  { method: 'GET', path: /^\/api\/logs$/, roles: KEYS, own: 'key-param' },
  { method: 'GET', path: /^\/api\/logs\/export$/, roles: KEYS, own: 'key-param' },
  { method: 'GET', path: new RegExp(`^/api/logs/(?!export$)[^/]+$`), roles: KEYS, own: 'log-id' },
  { method: 'GET', path: /^\/api\/keys$/, roles: KEYS, own: 'key-list' },
  { method: 'POST', path: /^\/api\/keys$/, roles: KEYS },
  { method: 'PATCH', path: new RegExp(`^/api/keys/[^/]+$`), roles: KEYS, own: 'key-id' },
  { method: 'DELETE', path: new RegExp(`^/api/keys/[^/]+$`), roles: KEYS, own: 'key-id' },
  { method: 'GET', path: /^\/api\/alerts$/, roles: MONEY_READ },
  { method: 'POST', path: /^\/api\/alerts\/[^/]+\/dismiss$/, roles: MONEY_READ },
  { method: 'GET', path: /^\/api\/alerts\/settings$/, roles: MONEY_READ },
  { method: '*', path: /^\/api\/alerts\/settings(\/secret)?$/, roles: MANAGE },
  { method: 'POST', path: /^\/api\/playground\/token$/, roles: KEYS },
  // Projects (docs/decisions/056): everyone reads them (a developer picks one for their keys through
  // PATCH /api/keys/:id, their own keys only); owners and admins manage them.
  { method: 'GET', path: /^\/api\/projects$/, roles: ALL },
  { method: '*', path: /^\/api\/projects(\/[^/]+)?$/, roles: MANAGE },
];

/** Routes about the signed-in person, never an organization: password, deletion, sessions, their organizations. */
export const PERSONAL_API = /^\/api\/(account(\/.*)?|orgs(\/.*)?|invitations(\/.*)?|auth\/.*)$/;

export function apiRule(method: string, path: string): ApiRule | null {
  return API_RULES.find((r) => (r.method === '*' || r.method === method) && r.path.test(path)) ?? null;
}

/** Whether `role` may call `method path` at all (a developer's own-key rules come on top). */
export function apiAllowed(role: OrgRole, method: string, path: string): boolean {
  if (role === 'owner') return true;
  const rule = apiRule(method === 'HEAD' ? 'GET' : method, path);
  return rule !== null && rule.roles.includes(role);
}

/** Dashboard pages by first segment under /dashboard ('' is the overview). Unlisted: every role. */
const PAGE_RULES: Record<string, readonly OrgRole[]> = {
  keys: KEYS,
  projects: ALL,
  playground: KEYS,
  logs: MANAGE,
  usage: MONEY_READ,
  billing: MONEY_READ,
  alerts: MONEY_READ,
};

export function pageAllowed(role: OrgRole, path: string): boolean {
  const segment = /^\/dashboard\/?([^/?#]*)/.exec(path)?.[1] ?? '';
  const roles = PAGE_RULES[segment];
  return !roles || roles.includes(role);
}

/** Organization management (members, invitations, settings) by action. */
export const ORG_ACTIONS = {
  view: ALL,
  members: MANAGE,
  invite: MANAGE,
  rename: MANAGE,
  audit: MANAGE,
  /** Domains whose people must sign in through SSO (docs/decisions/052). */
  sso: MANAGE,
  spend: MONEY_READ,
  transfer: ['owner'],
  delete: ['owner'],
} as const satisfies Record<string, readonly OrgRole[]>;
export type OrgAction = keyof typeof ORG_ACTIONS;

export function orgAllowed(role: OrgRole, action: OrgAction): boolean {
  return (ORG_ACTIONS[action] as readonly OrgRole[]).includes(role);
}
