// The limit rules of one request: every layer (global, tier, per-key, model, endpoint) as the
// limiter takes them, built once per config, principal, model and endpoint.
import type { GatewayConfig, ModelInfo, TierInfo } from '@/lib/config';
import type { Rule } from '@/lib/limits/types';
import { accountKey, modelKey } from '@/lib/limits/keys';
import type { Principal } from '@/lib/auth/principal';
import { keyRules } from '@/lib/auth/admission';

/** `batch`: a line of a batch (lib/batches): none of the rate rules, only the balance (its batch's own concurrency bounds it). */
export type Endpoint = 'chat' | 'embeddings' | 'anthropic' | 'count_tokens' | 'batch';

export const MINUTE = 60_000;
const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** The account's effective limits: the tier table, with per-account overrides (VIP within its range). */
function effectiveLimits(principal: Principal, cfg: GatewayConfig): TierInfo {
  const tier = cfg.tiers[principal.tier];
  const o = principal.limits;
  if (!o) return tier;
  const bounded = principal.tier === 'enterprise';
  return {
    ...tier,
    rpm: o.rpm ? (bounded ? o.rpm : Math.min(o.rpm, tier.maxRpm)) : tier.rpm,
    rph: o.rph ?? tier.rph,
    tokensPerDay: o.tokensPerDay === undefined ? tier.tokensPerDay : o.tokensPerDay,
    concurrency: o.concurrency ? (bounded ? o.concurrency : Math.min(o.concurrency, tier.maxConcurrency)) : tier.concurrency,
  };
}

// Rule lists depend only on the config, the cached principal, the model and the endpoint, so they
// are built once per combination (the config and principal objects are replaced when they change).
const ruleCache = new WeakMap<GatewayConfig, WeakMap<Principal, Map<string, Rule[]>>>();

export function rulesFor(principal: Principal, cfg: GatewayConfig, model: ModelInfo | null, endpoint: Endpoint): Rule[] {
  let byPrincipal = ruleCache.get(cfg);
  if (!byPrincipal) ruleCache.set(cfg, (byPrincipal = new WeakMap()));
  let byModel = byPrincipal.get(principal);
  if (!byModel) byPrincipal.set(principal, (byModel = new Map()));
  const key = `${endpoint}|${model?.name ?? ''}`;
  let rules = byModel.get(key);
  if (!rules) byModel.set(key, (rules = buildRules(principal, cfg, model, endpoint)));
  return rules;
}

/** A window rule: fixed sub-buckets whatever the limit (lib/limits), exact in any span of windowMs. */
function windowRule(key: string, limit: number, windowMs: number, label: string, requests?: boolean): Rule {
  return { kind: 'window', key, limit, windowMs, label, requests };
}

function buildRules(principal: Principal, cfg: GatewayConfig, model: ModelInfo | null, endpoint: Endpoint): Rule[] {
  // Batch lines are paced by their batch (batches.concurrency, the job caps): counted against the
  // account's or model's request rates they would starve the account's and the platform's live traffic.
  if (endpoint === 'batch') return [];
  const u = principal.userId;
  const rules: Rule[] = [
    { kind: 'gcra', key: 'gw:global', limit: cfg.limits.global_qps, windowMs: 1000, label: `global: ${cfg.limits.global_qps} requests per second` },
  ];
  if (endpoint === 'count_tokens') {
    // The mirror's token counting calls the upstream on the operator's key without charge: its own
    // request rate and concurrency, at the tier's figures, so that it is neither free of limits nor
    // eats into the account's budget for messages.
    const t = effectiveLimits(principal, cfg);
    rules.push(windowRule(accountKey(u, 'ct:rpm'), t.rpm, MINUTE, `count_tokens: ${t.rpm} requests per minute`, true), {
      kind: 'concurrency',
      key: accountKey(u, 'ct:conc'),
      limit: t.concurrency,
      label: `count_tokens: ${t.concurrency} concurrent requests`,
    });
  } else if (endpoint === 'embeddings') {
    rules.push(windowRule(accountKey(u, 'emb:rpm'), cfg.limits.embeddings_rpm, MINUTE, `embeddings: ${cfg.limits.embeddings_rpm} requests per minute`, true), {
      kind: 'concurrency',
      key: accountKey(u, 'emb:conc'),
      limit: cfg.limits.embeddings_concurrency,
      label: `embeddings: ${cfg.limits.embeddings_concurrency} concurrent requests`,
    });
  } else {
    const t = effectiveLimits(principal, cfg);
    const name = `tier ${principal.tier}`;
    rules.push(
      windowRule(accountKey(u, 'rpm'), t.rpm, MINUTE, `${name}: ${t.rpm} requests per minute`, true),
      windowRule(accountKey(u, 'rph'), t.rph, HOUR, `${name}: ${t.rph} requests per hour`),
      { kind: 'concurrency', key: accountKey(u, 'conc'), limit: t.concurrency, label: `${name}: ${t.concurrency} concurrent requests` },
    );
    if (t.tokensPerDay !== null) {
      rules.push({ kind: 'quota', key: accountKey(u, 'tpd'), limit: t.tokensPerDay, windowMs: DAY, label: `${name}: ${t.tokensPerDay} tokens per day` });
    }
  }
  rules.push(...keyRules(principal)); // per-key controls (issue 29)
  if (model) {
    // Per-model caps are shared by all free and pro accounts (the spec's per-model table).
    if (principal.tier === 'free' || principal.tier === 'pro') {
      if (model.rpm) rules.push(windowRule(modelKey(model.name, 'rpm'), model.rpm, MINUTE, `model ${model.name}: ${model.rpm} requests per minute`));
      if (model.concurrency)
        rules.push({
          kind: 'concurrency',
          key: modelKey(model.name, 'conc'),
          limit: model.concurrency,
          label: `model ${model.name}: ${model.concurrency} concurrent requests`,
        });
    }
    // Tokens per minute on the model, across the platform (every tier): reserved at admission, settled after.
    if (model.tpm)
      rules.push({
        kind: 'tokens',
        key: modelKey(model.name, 'tpm'),
        limit: model.tpm,
        windowMs: MINUTE,
        label: `model ${model.name}: ${model.tpm} tokens per minute`,
      });
    if (model.platformDailyRequests) {
      rules.push(
        windowRule(
          modelKey(model.name, 'day'),
          model.platformDailyRequests,
          DAY,
          `model ${model.name}: ${model.platformDailyRequests} requests per day across the platform`,
        ),
      );
    }
  }
  return rules;
}

// What an admission keeps of its rule list, derived once per list (the lists themselves are cached).
const concurrencyKeyCache = new WeakMap<Rule[], string[]>();
const quotaKeyCache = new WeakMap<Rule[], string | null>();
const rateRuleCache = new WeakMap<Rule[], Rule[]>();

/** The keys of the concurrency rules: the leases an admission holds. */
export function concurrencyKeysOf(rules: Rule[]): string[] {
  let keys = concurrencyKeyCache.get(rules);
  if (!keys) concurrencyKeyCache.set(rules, (keys = rules.filter((r) => r.kind === 'concurrency').map((r) => r.key)));
  return keys;
}

const tokensIndexCache = new WeakMap<Rule[], number[]>();

/** Positions of the tokens rules (TPM): their states are kept to settle the reservation after the reply. */
export function tokensRuleIndexes(rules: Rule[]): number[] {
  let at = tokensIndexCache.get(rules);
  if (!at) {
    at = [];
    rules.forEach((r, i) => r.kind === 'tokens' && at!.push(i));
    tokensIndexCache.set(rules, at);
  }
  return at;
}

/** The key of the daily token quota, if the rules have one. */
export function quotaKeyOf(rules: Rule[]): string | undefined {
  let key = quotaKeyCache.get(rules);
  if (key === undefined) quotaKeyCache.set(rules, (key = rules.find((r) => r.kind === 'quota')?.key ?? null));
  return key ?? undefined;
}

/** The request-rate rules alone: what a request refused before its admission is counted against. */
export function requestRateRulesOf(rules: Rule[]): Rule[] {
  let rate = rateRuleCache.get(rules);
  if (!rate) rateRuleCache.set(rules, (rate = rules.filter((r) => (r.kind === 'window' || r.kind === 'gcra') && r.requests)));
  return rate;
}
