// Limiter key names. Every key of one account carries the account's hash tag ({u:<id>}): on Redis
// Cluster the account's admission (its windows, leases, quota, balance and its keys' budgets) then
// touches one slot and runs as one script call. Keys shared across accounts (the global layer, a
// model's caps) carry their own tag and are admitted by a call of their own (see the cluster
// limiter). On a single Redis the tags change nothing but the names.

/** A key of the account's own limiter state: `gw:{u:<id>}:<name>`. */
export const accountKey = (userId: string, name: string): string => `gw:{u:${userId}}:${name}`;

/** A key of a model's platform-wide caps: `gw:{m:<model>}:<name>`. */
export const modelKey = (model: string, name: string): string => `gw:{m:${model}}:${name}`;

/**
 * A key of a channel's limits (its concurrency, its tokens per minute): `gw:{c:<channel>}:<name>`,
 * a slot of its own on a cluster (a channel is taken by a call of its own, when it is chosen).
 */
export const channelKey = (channel: string, name: string): string => `gw:{c:${channel}}:${name}`;

/** The hash tag of a key (what Redis Cluster hashes), or the whole key without one. */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return key;
  return key.slice(open + 1, close);
}

/** Whose limit a key is, for metrics: 'u' (an account, its keys included), 'm' (a model), 'c' (a channel), 'global'. */
export function keyScope(key: string): string {
  const part = key.split(':')[1] ?? 'global';
  return part.startsWith('{') ? part.slice(1) : part;
}

/** Limiter key holding an account's spendable balance in pico-USD. */
export const balanceKey = (userId: string): string => accountKey(userId, 'bal');
