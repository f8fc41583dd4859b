// What sign-up accepts, shared by the server (lib/accounts/queries.ts) and the sign-up form, so the
// browser refuses exactly what the server would and only plausible requests spend the per-IP
// sign-up allowance (3 a minute). The password rule follows NIST SP 800-63B: a minimum length and
// a check against commonly used passwords, no composition rules. Client-safe: no server imports.

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 200;

// The most common passwords of breach corpora that are at least 8 characters long, lower-cased.
// (kept as a block: one entry per line would make it 90 lines)
// prettier-ignore
const COMMON_PASSWORDS = new Set([
  '12345678', '123456789', '1234567890', '12345678910', '87654321', '11111111', '00000000', '88888888',
  '11223344', '12341234', '12344321', '123123123', '147258369', '987654321', '0987654321', '1q2w3e4r',
  '1q2w3e4r5t', '1qaz2wsx', 'qwertyui', 'qwertyuiop', 'qwerty123', 'qwerty12', 'asdfghjk', 'asdfghjkl',
  'zxcvbnm1', 'password', 'password1', 'password12', 'password123', 'passw0rd', 'p@ssw0rd', 'p@ssword',
  'iloveyou', 'iloveyou1', 'sunshine', 'princess', 'football', 'baseball', 'superman', 'trustno1',
  'welcome1', 'welcome123', 'letmein1', 'abc12345', 'abcd1234', 'a1b2c3d4', 'aa123456', 'admin123',
  'administrator', 'changeme', 'computer', 'corvette', 'dragon12', 'starwars', 'whatever', 'michelle',
  'jennifer', 'jordan23', 'liverpool', 'chelsea1', 'master12', 'mustang1', 'shadow12', 'monkey12',
  'charlie1', 'qazwsxedc', 'zaq12wsx', 'q1w2e3r4', 'q1w2e3r4t5', 'google123', 'samsung1', 'secret12',
  'test1234', 'testtest', 'loveyou1', 'babygirl', 'butterfly', 'pokemon1', 'minecraft', 'aaaaaaaa',
  'qwerasdf', 'asdf1234', 'zxcv1234', 'woaini1314', '5201314520', 'a123456789', 'qq123456', '123qweasd',
]);

/** Why a password would be refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `Password must be at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH) return `Password must be at most ${PASSWORD_MAX_LENGTH} characters.`;
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || /^(.)\1+$/.test(password)) {
    return 'This password is one of the most commonly used ones. Choose another: a few unrelated words work well.';
  }
  return null;
}

// One address, no control characters; a domain of labels, none empty (`a@x..test` is not an address).
const EMAIL_PATTERN = /^[^\s@\u0000-\u001f\u007f]{1,64}@(?=.{4,190}$)(?:[^\s@.\u0000-\u001f\u007f]+\.)+[^\s@.\u0000-\u001f\u007f]{2,}$/;

/**
 * The one form of an email address that registration, sign-in, the sign-in throttle, the CLI and
 * ADMIN_EMAILS all use: trimmed, lower case, Unicode NFC, and without the root dot a domain may be
 * written with (`alice@x.test.` is `alice@x.test`), so one mailbox is one account.
 */
export function normaliseEmail(email: string): string {
  const e = email.normalize('NFC').trim().toLowerCase();
  const at = e.lastIndexOf('@');
  return at === -1 ? e : e.slice(0, at + 1) + e.slice(at + 1).replace(/\.+$/, '');
}

/** Why an email address would be refused, or null. */
export function emailProblem(email: string): string | null {
  return EMAIL_PATTERN.test(normaliseEmail(email)) ? null : 'Enter a valid email address.';
}
