import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// API keys: a fixed prefix plus 32 random bytes (256 bits) in base62. Only the SHA-256 is stored.
export const KEY_PREFIX = 'sk-gw-';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 43; // 62^43 > 2^256
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH}}$`);
// Keys imported from new-api and one-api (`admin import`) keep working under their own string:
// `sk-` + 48 base62 characters (285 bits), looked up by hash like ours (docs/decisions/032-importers.md).
const IMPORTED_KEY_PATTERN = /^sk-[0-9A-Za-z]{48}$/;

export function generateApiKey(): { key: string; hash: string; prefix: string; lastFour: string } {
  const chars: string[] = [];
  while (chars.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      // Rejection sampling keeps every character equally likely (248 = 4 * 62).
      if (byte < 248 && chars.length < SECRET_LENGTH) chars.push(ALPHABET[byte % 62]);
    }
  }
  const key = KEY_PREFIX + chars.join('');
  return { key, hash: hashApiKey(key), prefix: key.slice(0, KEY_PREFIX.length + 4), lastFour: key.slice(-4) };
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key) || IMPORTED_KEY_PATTERN.test(key);
}

// Once per request: the one-shot crypto.hash (no Hash object) is about 3x faster than createHash here.
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Pulls our key from `Authorization: Bearer` or Anthropic's `x-api-key`. */
export function extractApiKey(headers: { authorization?: string; 'x-api-key'?: string }): string | undefined {
  const auth = headers.authorization;
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return match ? match[1] : '';
  }
  return headers['x-api-key'];
}
