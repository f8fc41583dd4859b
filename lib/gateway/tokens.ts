import type { Tiktoken } from 'js-tiktoken/lite';
import { singleton } from '@/lib/singleton';

// Token counts for upstreams that report no usage. The encoder (a few MB of ranks) is loaded on
// first use only, so requests whose upstream reports usage never pay for it.
function encoder(): Promise<Tiktoken> {
  return singleton('tiktoken', async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([import('js-tiktoken/lite'), import('js-tiktoken/ranks/o200k_base')]);
    return new Tiktoken(ranks.default);
  });
}

export async function countTokens(text: string): Promise<number> {
  return text ? (await encoder()).encode(text, [], []).length : 0;
}

/** Text of OpenAI-style messages (string or content-part arrays) plus the per-message overhead. */
export async function countMessageTokens(messages: unknown): Promise<number> {
  if (!Array.isArray(messages)) return 0;
  const enc = await encoder();
  let total = 3;
  for (const m of messages) total += 4 + enc.encode(textOf((m as { content?: unknown }).content), [], []).length;
  return total;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : ((p as { text?: string }).text ?? ''))).join('');
  return '';
}

/**
 * A cheap upper bound of prompt tokens for the balance reservation: no tokenizer on the hot path.
 * A token is practically never shorter than two bytes of the JSON body (CJK is ~3 bytes a token).
 */
export function promptTokenBound(bodyBytes: number): number {
  return Math.ceil(bodyBytes / 2);
}
