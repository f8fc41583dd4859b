// What every translator with a Gemini upstream reads from its replies, and writes into its requests, the same way.
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

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

/** fileData needs a MIME type; an http URL only hints at it by its extension (JPEG when it says nothing). */
export function mimeOfUrl(url: string): string {
  let pathname = url;
  try {
    pathname = new URL(url).pathname;
  } catch {
    // keep the raw text
  }
  const ext = /\.([a-z0-9]+)$/i.exec(pathname)?.[1]?.toLowerCase();
  return (ext && MIME_BY_EXTENSION[ext]) || 'image/jpeg';
}
