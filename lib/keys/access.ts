import { env } from '@/lib/env';
import { GatewayError } from '@/lib/errors';
import { clientIpFrom } from '@/lib/client-ip';
import { ipMatcher, type KeyControls } from '@/lib/keys/controls';

// The checks a request makes with its key's cached controls before it is admitted: expiry, client
// address, model. Each is a property lookup or two on the cached key: nothing leaves the process.

/** A key's controls in the form the gateway checks them, built once when the key is cached. */
export interface KeyGuard {
  name: string;
  budgetPico: bigint | null;
  monthlyBudgetPico: bigint | null;
  /** Null: every model the tier allows. */
  models: ReadonlySet<string> | null;
  rpm: number | null;
  /** Tokens per minute (input + output). */
  tpm: number | null;
  concurrency: number | null;
  /** Null: any address. */
  ipAllowed: ((ip: string) => boolean) | null;
  allowedIps: readonly string[];
  /** Unix ms; null: never expires. */
  expiresAt: number | null;
  /** The controls' version (ApiKey.controlsVersion): budget counters are per version. */
  version: number;
  /** The key's project, when it has a budget or an allowlist (docs/decisions/056). */
  project?: GroupBudget & { models: ReadonlySet<string> | null };
  /** The monthly budget of the organization member who made the key, when they have one. */
  member?: GroupBudget;
}

/** A monthly budget shared by a group of keys (a project's, a member's): one counter in the account's hash tag. */
export interface GroupBudget {
  id: string;
  /** The project's name, the member's email: what a refusal names. */
  name: string;
  monthlyBudgetPico: bigint | null;
  /** Bumped by budget edits (Project/Membership.budgetVersion): the counter is per version. */
  budgetVersion: number;
}

/**
 * A model allowlist whose refusal says who set it: the key's own list met with its project's
 * (their intersection), so one `has` serves routing and fallbacks as a plain set does.
 */
export class ModelAllowlist extends Set<string> {
  constructor(
    models: Iterable<string>,
    readonly refusal: (model: string) => GatewayError,
  ) {
    super(models);
  }
}

function keyRefusal(allowed: ReadonlySet<string>, model: string): GatewayError {
  return new GatewayError('model_not_allowed', `This API key may not use the model "${model}". Models allowed for this key: ${[...allowed].join(', ')}.`, {
    param: 'model',
  });
}

/** The key's allowlist, narrowed by its project's (a project never widens a key). */
function allowlistOf(keyModels: readonly string[], project: { name: string; models: ReadonlySet<string> | null } | undefined): ReadonlySet<string> | null {
  const own = keyModels.length > 0 ? new Set(keyModels) : null;
  const inProject = project?.models ?? null;
  if (!inProject) return own;
  const both = own ? [...own].filter((m) => inProject.has(m)) : inProject;
  return new ModelAllowlist(both, (model) =>
    !inProject.has(model)
      ? new GatewayError(
          'model_not_allowed',
          `This API key's project "${project!.name}" may not use the model "${model}". Models allowed in the project: ${[...inProject].join(', ')}.`,
          { param: 'model' },
        )
      : keyRefusal(own!, model),
  );
}

/** The guard of a key, or null when it has no control set (most keys: nothing to check). */
export function keyGuard(name: string, c: KeyControls, version = 0, groups: { project?: KeyGuard['project']; member?: GroupBudget } = {}): KeyGuard | null {
  const project = groups.project && (groups.project.models || groups.project.monthlyBudgetPico !== null) ? groups.project : undefined;
  const member = groups.member && groups.member.monthlyBudgetPico !== null ? groups.member : undefined;
  const none =
    !project &&
    !member &&
    c.budgetPico === null &&
    c.monthlyBudgetPico === null &&
    c.models.length === 0 &&
    c.rpm === null &&
    c.tpm === null &&
    c.concurrency === null &&
    c.allowedIps.length === 0 &&
    c.expiresAt === null;
  if (none) return null;
  return {
    name,
    budgetPico: c.budgetPico,
    monthlyBudgetPico: c.monthlyBudgetPico,
    models: allowlistOf(c.models, project),
    rpm: c.rpm,
    tpm: c.tpm,
    concurrency: c.concurrency,
    ipAllowed: c.allowedIps.length > 0 ? ipMatcher(c.allowedIps) : null,
    allowedIps: c.allowedIps,
    expiresAt: c.expiresAt?.getTime() ?? null,
    version,
    project,
    member,
  };
}

type IpRequest = { ip: string; headers: Record<string, string | undefined> };

/**
 * Requests whose `ip` is not the connection's address: the route-handler path (`next start`) sees
 * only X-Forwarded-For, which Next.js fills from the socket only when the client sent none.
 */
const hearsayIp = new WeakSet<IpRequest>();

/** Marks a request whose `ip` came from a header the client may have written (lib/gateway/web-adapter.ts). */
export function ipFromHeaders(req: IpRequest): void {
  hearsayIp.add(req);
}

/**
 * The client address a key's ranges are matched against, and the per-IP limits count: the one
 * reading of lib/client-ip.ts (TRUST_PROXY). Where the connection's address is unknown (route
 * handlers without TRUST_PROXY) it is "unknown", which no range matches: a key with ranges is
 * refused there rather than trust a header anyone can send.
 */
export function keyClientIp(req: IpRequest): string {
  if (hearsayIp.has(req) && !env.TRUST_PROXY) return 'unknown';
  return countedClientIp(req);
}

/**
 * The client address per-address counters use (the invalid-key throttle): keyClientIp's, except on
 * the route-handler path without TRUST_PROXY, where it is X-Forwarded-For's last entry (Next.js's
 * socket address when the client sent none) rather than one "unknown" that every client would
 * share, and one client could exhaust for all.
 */
export function countedClientIp(req: IpRequest): string {
  return clientIpFrom(hearsayIp.has(req) ? undefined : req.ip, req.headers['x-forwarded-for']);
}

/** 401 key_expired, 403 ip_not_allowed: the key's expiry and address ranges. */
export function checkKeyAccess(guard: KeyGuard | null, ip: string, now = Date.now()): void {
  if (!guard) return;
  if (guard.expiresAt !== null && now >= guard.expiresAt) {
    throw new GatewayError('key_expired', `This API key expired at ${new Date(guard.expiresAt).toISOString()}.`);
  }
  if (guard.ipAllowed && !guard.ipAllowed(ip)) {
    // The address is the caller's own: naming it helps them fix the key's ranges.
    const from = ip === 'unknown' ? 'an address this server cannot see (the operator must set TRUST_PROXY behind a proxy)' : ip.slice(0, 64);
    throw new GatewayError(
      'ip_not_allowed',
      `This API key may not be used from ${from}: it allows ${guard.allowedIps.length} address range(s) set on the key.`,
    );
  }
}

/** Whether the key lets its holder use `model` (its allowlist, when it has one). */
export function keyAllowsModel(guard: KeyGuard | null, model: string): boolean {
  return !guard?.models || guard.models.has(model);
}

/** 403 model_not_allowed naming the model, when the key's allowlist (`allowed`, if any) lacks it. */
export function checkAllowedModel(allowed: ReadonlySet<string> | null | undefined, model: string): void {
  if (!allowed || allowed.has(model)) return;
  throw allowed instanceof ModelAllowlist ? allowed.refusal(model) : keyRefusal(allowed, model);
}

export function checkKeyModel(guard: KeyGuard | null, model: string): void {
  checkAllowedModel(guard?.models, model);
}
