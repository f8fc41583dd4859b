// The x-ratelimit-* headers OpenAI's clients read, from the limiter's rule states.
import type { RuleState } from '@/lib/limits/types';

/** Go-style duration as OpenAI sends it: 1s, 6m0s, 12ms. */
function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const totalS = Math.ceil(ms / 1000);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

export function rateLimitHeaders(states: RuleState[]): Record<string, string> {
  const headers: Record<string, string> = {};
  // The request-rate rule with the least room left (the first of equals).
  let req: RuleState | undefined;
  for (const s of states) {
    if ((s.rule.kind === 'window' || s.rule.kind === 'gcra') && s.rule.requests && (!req || s.remaining < req.remaining)) req = s;
  }
  if (req) {
    headers['x-ratelimit-limit-requests'] = String(req.limit);
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, req.remaining));
    headers['x-ratelimit-reset-requests'] = goDuration(req.resetMs);
  }
  // The token limit with the least room left: the daily quota or a tokens-per-minute rule.
  let tok: RuleState | undefined;
  for (const s of states) if ((s.rule.kind === 'quota' || s.rule.kind === 'tokens') && (!tok || s.remaining < tok.remaining)) tok = s;
  if (tok) {
    headers['x-ratelimit-limit-tokens'] = String(tok.limit);
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, tok.remaining));
    headers['x-ratelimit-reset-tokens'] = goDuration(tok.resetMs);
  }
  return headers;
}
