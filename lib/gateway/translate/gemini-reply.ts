// What every translator with a Gemini upstream reads the same way from its replies.
import { usageCount } from '@/lib/billing/cost';
import type { JsonObject, UpstreamUsage } from '@/lib/gateway/translate/types';

/**
 * Gemini's usageMetadata in billing terms: the prompt less its cached part (billed at the cache
 * price), plus the tokens of built-in tool prompts (billed as input); candidatesTokenCount leaves
 * out the thoughts, and both are billed as output. Null without a usable prompt count.
 */
export function geminiUsage(u: unknown, completionFinal: boolean): UpstreamUsage | null {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return null;
  const o = u as JsonObject;
  const prompt = usageCount(o.promptTokenCount);
  if (prompt === undefined) return null;
  const cached = Math.min(prompt, usageCount(o.cachedContentTokenCount) ?? 0);
  const thoughts = usageCount(o.thoughtsTokenCount) ?? 0;
  return {
    promptTokens: prompt - cached + (usageCount(o.toolUsePromptTokenCount) ?? 0),
    completionTokens: (usageCount(o.candidatesTokenCount) ?? 0) + thoughts,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
    completionFinal,
  };
}
