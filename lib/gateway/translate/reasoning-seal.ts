// The `encrypted_content` of a reasoning item the gateway writes (Responses clients that keep no
// server state, such as Codex, ask for it with `include: ["reasoning.encrypted_content"]` and send
// the item back next turn). It carries what an upstream needs back to go on with its own
// reasoning: a Claude model's signed thinking blocks, Gemini's thought signatures on its calls.
// Opaque and authenticated (AES-256-GCM under a key derived from SECRETS_KEY), so a client can
// neither read another upstream's secrets out of it nor forge one; a blob that does not open is
// ignored, as OpenAI ignores reasoning it cannot use.
import { isObject } from '@/lib/gateway/translate/wire/json';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { secretsKey } from '@/lib/secrets';

import type { JsonObject } from '@/lib/gateway/translate/types';

/** How a sealed blob starts (a native channel's request is cleared of them). */
export const SEALED_PREFIX = 'gwr1.';
const PREFIX = SEALED_PREFIX;
/** Bound to the account: a blob of one account's conversation does not open in another's. */
const aad = (account: string) => Buffer.from(`model-gateway reasoning v1\0${account}`);

let key: Buffer | undefined;
function sealKey(): Buffer {
  key ??= Buffer.from(hkdfSync('sha256', secretsKey(), Buffer.alloc(0), 'responses.reasoning.encrypted_content', 32));
  return key;
}

/** What a sealed reasoning item carries. */
export interface ReasoningState {
  /** Anthropic thinking / redacted_thinking blocks of the turn, signatures included. */
  thinking_blocks?: JsonObject[];
  /** Upstream-specific members of the turn's tool calls by call id (Gemini's `extra_content`). */
  calls?: Record<string, JsonObject>;
}

export function sealReasoning(state: ReasoningState, account = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(), iv);
  cipher.setAAD(aad(account));
  const data = Buffer.concat([cipher.update(JSON.stringify(state), 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url');
}

/** The state of a blob this gateway sealed for `account`; undefined for anything else (another account's or service's, altered, garbage). */
export function openReasoning(blob: unknown, account = ''): ReasoningState | undefined {
  if (typeof blob !== 'string' || !blob.startsWith(PREFIX)) return undefined;
  try {
    const raw = Buffer.from(blob.slice(PREFIX.length), 'base64url');
    if (raw.length < 29) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', sealKey(), raw.subarray(0, 12));
    decipher.setAAD(aad(account));
    decipher.setAuthTag(raw.subarray(12, 28));
    const parsed: unknown = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
    if (!isObject(parsed)) return undefined;
    const state: ReasoningState = {};
    if (Array.isArray(parsed.thinking_blocks)) state.thinking_blocks = parsed.thinking_blocks.filter(isObject);
    if (isObject(parsed.calls)) state.calls = Object.fromEntries(Object.entries(parsed.calls).filter((e): e is [string, JsonObject] => isObject(e[1])));
    return state;
  } catch {
    return undefined;
  }
}
