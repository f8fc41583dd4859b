import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';

// On a fresh machine the operator has set no secrets: generate them once and keep them under
// DATA_DIR (mode 0600) so sessions survive restarts. Production deployments set them in the environment.
interface LocalSecrets {
  authSecret: string;
  secretsKey: string;
}

function localSecrets(): LocalSecrets {
  return singleton('local-secrets', () => {
    const file = path.resolve(env.DATA_DIR, 'secrets.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as LocalSecrets;
    const secrets = { authSecret: randomBytes(32).toString('base64url'), secretsKey: randomBytes(32).toString('hex') };
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
    return secrets;
  });
}

export function authSecret(): string {
  return env.NEXTAUTH_SECRET ?? localSecrets().authSecret;
}

/** 32-byte key for encrypting upstream secrets at rest. */
export function secretsKey(): Buffer {
  const text = env.SECRETS_KEY ?? localSecrets().secretsKey;
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, hex or base64');
  return key;
}
