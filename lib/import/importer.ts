import { createHash, randomBytes } from 'node:crypto';
import YAML from 'yaml';
import bcrypt from 'bcryptjs';
import { getDb } from '@/lib/db';
import { getConfig, type UpstreamProtocolName } from '@/lib/config';
import { encryptSecret } from '@/lib/crypto';
import { generateApiKey, hashApiKey, isWellFormedKey } from '@/lib/auth/keys';
import { hashCode } from '@/lib/admin/redemption';
import { applyPendingCredits, creditBalance, picoToDecimal } from '@/lib/billing/ledger';
import { formatPico, PICO } from '@/lib/billing/money';
import { writeAudit, CLI_ACTOR } from '@/lib/admin/audit';
import { GatewayError } from '@/lib/errors';
import { bool, deleted, int, text, type SourceDb } from './source';

// `admin import --from new-api|one-api`: channels, users, tokens, balances and redemption codes
// from another gateway's database. Both projects share one-api's schema for these tables (gorm
// models: users, tokens, channels, redemptions; new-api added columns, read when present).
//
// Idempotent: every row made here is recorded in ImportRecord under (source, kind, source id); a
// second run finds it and skips (a balance is credited only with the account it belongs to, in one
// transaction). Channels live in the operator config, not in the database: they are written as a
// YAML file of channel entries (keys encrypted with SECRETS_KEY, `api_key_encrypted`) to add to it.

export type ImportFrom = 'new-api' | 'one-api';

export interface ImportOptions {
  from: ImportFrom;
  /** Their quota units per USD (new-api's and one-api's default: 500,000 = $1). */
  quotaPerUsd: bigint;
  dryRun: boolean;
}

export interface ImportReport {
  from: ImportFrom;
  source: string;
  dryRun: boolean;
  quotaPerUsd: string;
  users: { imported: number; skipped: number; passwordResetNeeded: string[]; items: ReportItem[] };
  tokens: { kept: number; reissued: number; skipped: number; reissuedKeys: { user: string; old: string; new: string }[]; items: ReportItem[] };
  redemptions: { imported: number; skipped: number; items: ReportItem[] };
  channels: { written: number; skipped: number; items: ReportItem[]; yaml: string };
}

export interface ReportItem {
  id: string;
  action: 'create' | 'exists' | 'skip';
  detail: string;
}

/** Their quota converted to pico-USD, exactly (rounded down to the picodollar). */
export const quotaToPico = (quota: bigint, perUsd: bigint) => (quota * PICO) / perUsd;

/** new-api's and one-api's user token as its clients send it: `sk-` + the stored 48 characters. */
export const theirKeyString = (stored: string) => (stored.startsWith('sk-') ? stored : `sk-${stored}`);
const mask = (key: string) => (key.length > 12 ? `${key.slice(0, 7)}…${key.slice(-4)}` : '…');

/** A uuid derived from text: the redemption batch of one source is the same batch on every run. */
function uuidOf(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Their channel types whose upstream speaks one of our protocols (constant/channel.go in both projects). */
const CHANNEL_TYPES: Record<number, { protocol: UpstreamProtocolName; base: string; name: string }> = {
  1: { protocol: 'openai', base: 'https://api.openai.com', name: 'OpenAI' },
  8: { protocol: 'openai', base: '', name: 'Custom (OpenAI-compatible)' },
  14: { protocol: 'anthropic', base: 'https://api.anthropic.com', name: 'Anthropic' },
  20: { protocol: 'openai', base: 'https://openrouter.ai/api', name: 'OpenRouter' },
  24: { protocol: 'gemini', base: 'https://generativelanguage.googleapis.com', name: 'Gemini' },
  25: { protocol: 'openai', base: 'https://api.moonshot.cn', name: 'Moonshot' },
  40: { protocol: 'openai', base: 'https://api.siliconflow.cn', name: 'SiliconFlow' },
  43: { protocol: 'openai', base: 'https://api.deepseek.com', name: 'DeepSeek' },
  48: { protocol: 'openai', base: 'https://api.x.ai', name: 'xAI' },
};

/** Their base URL is the host (they append /v1/…); ours for OpenAI-protocol channels ends in /v1. */
function baseUrlFor(protocol: UpstreamProtocolName, given: string, fallback: string): string {
  const base = (given || fallback).replace(/\/+$/, '');
  if (!base) return '';
  if (protocol === 'openai' && !/\/v\d+$/.test(base)) return `${base}/v1`;
  return base;
}

const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

export async function runImport(src: SourceDb, opts: ImportOptions): Promise<ImportReport> {
  if (opts.quotaPerUsd <= 0n) throw new GatewayError('invalid_request', '--quota-per-usd must be a positive integer');
  const source = `${opts.from}:${src.fingerprint}`;
  const report: ImportReport = {
    from: opts.from,
    source,
    dryRun: opts.dryRun,
    quotaPerUsd: opts.quotaPerUsd.toString(),
    users: { imported: 0, skipped: 0, passwordResetNeeded: [], items: [] },
    tokens: { kept: 0, reissued: 0, skipped: 0, reissuedKeys: [], items: [] },
    redemptions: { imported: 0, skipped: 0, items: [] },
    channels: { written: 0, skipped: 0, items: [], yaml: '' },
  };
  const db = await getDb();
  const cfg = getConfig();
  const records = new Map((await db.importRecord.findMany({ where: { source } })).map((r) => [`${r.kind}:${r.sourceId}`, r.targetId] as const));
  const record = (kind: string, sourceId: string, targetId: string) => ({ source, kind, sourceId, targetId });

  // Users (and their balances).
  const userIds = new Map<string, string>(); // their id -> our id (existing or, in a dry run, planned)
  for (const u of await src.rows('users')) {
    const id = int(u, 'id').toString();
    const username = text(u, 'username');
    const status = Number(int(u, 'status', 1));
    const item = (action: ReportItem['action'], detail: string) => report.users.items.push({ id, action, detail });
    const done = records.get(`user:${id}`);
    if (done) {
      userIds.set(id, done);
      item('exists', `imported before as ${done}`);
      continue;
    }
    // one-api marks deleted users with status 3; new-api soft-deletes (deleted_at).
    if (deleted(u) || status === 3) {
      report.users.skipped++;
      item('skip', 'deleted there');
      continue;
    }
    const givenEmail = text(u, 'email').trim().toLowerCase();
    const email =
      givenEmail && givenEmail.includes('@') && givenEmail.length <= 254
        ? givenEmail
        : `${username.toLowerCase().replace(/[^a-z0-9._-]/g, '_') || `user${id}`}@imported.invalid`;
    const taken = await db.user.findUnique({ where: { email }, select: { id: true } });
    if (taken) {
      // An account here that this import did not make: never merged into (its owner is not known to be the same person).
      report.users.skipped++;
      item('skip', `an account with email ${email} already exists here (not made by this import); its tokens are skipped too`);
      continue;
    }
    const theirHash = text(u, 'password');
    const keepHash = BCRYPT.test(theirHash);
    const passwordHash = keepHash ? theirHash : await bcrypt.hash(randomBytes(32).toString('base64'), 10);
    const balance = quotaToPico(int(u, 'quota'), opts.quotaPerUsd);
    const notes = [
      `${username} → ${email}`,
      `balance $${formatPico(balance)} (quota ${int(u, 'quota')})`,
      keepHash ? 'password kept (bcrypt)' : 'password not importable: reset needed',
      ...(givenEmail ? [] : ['no email there: placeholder address, set a real one']),
      ...(status === 2 ? ['disabled there: suspended'] : []),
      ...(Number(int(u, 'role', 1)) >= 10 ? ['an administrator there: a plain account here (set-role to promote)'] : []),
    ];
    if (!keepHash) report.users.passwordResetNeeded.push(email);
    report.users.imported++;
    item('create', notes.join('; '));
    if (opts.dryRun) {
      userIds.set(id, `(new account ${email})`);
      continue;
    }
    const ourId = await db.$transaction(async (tx) => {
      const user = await tx.user.create({ data: { email, passwordHash, status: status === 2 ? 'suspended' : 'active' }, select: { id: true } });
      await tx.importRecord.create({ data: record('user', id, user.id) });
      if (balance > 0n)
        await creditBalance(user.id, 'admin_credit', balance, { tx, reference: `import:${source}:user:${id}`, note: `imported from ${opts.from}` });
      await writeAudit(CLI_ACTOR, { action: 'account.import', targetType: 'account', targetId: user.id, after: { from: opts.from, sourceId: id, email } }, tx);
      return user.id;
    });
    userIds.set(id, ourId);
  }
  if (!opts.dryRun) await applyPendingCredits();

  // Tokens: the same key string when it fits our key lookup (lib/auth/keys.ts), else a new key.
  const now = Date.now();
  for (const t of await src.rows('tokens')) {
    const id = int(t, 'id').toString();
    const owner = userIds.get(int(t, 'user_id').toString());
    const item = (action: ReportItem['action'], detail: string) => report.tokens.items.push({ id, action, detail });
    const skip = (why: string) => {
      report.tokens.skipped++;
      item('skip', why);
    };
    const done = records.get(`token:${id}`);
    if (done) {
      item('exists', `imported before as key ${done}`);
      continue;
    }
    if (!owner) {
      skip('its account was not imported');
      continue;
    }
    if (deleted(t)) {
      skip('deleted there');
      continue;
    }
    const status = Number(int(t, 'status', 1));
    if (status !== 1) {
      skip(`not enabled there (status ${status}: ${({ 2: 'disabled', 3: 'expired', 4: 'exhausted' } as Record<number, string>)[status] ?? 'unknown'})`);
      continue;
    }
    const expiredTime = int(t, 'expired_time', -1);
    const expiresAt = expiredTime > 0n ? new Date(Number(expiredTime) * 1000) : null;
    if (expiresAt && expiresAt.getTime() <= now) {
      skip('expired there');
      continue;
    }
    let models: string[] = [];
    if (bool(t, 'model_limits_enabled')) {
      const theirs = text(t, 'model_limits')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean);
      models = theirs.filter((m) => cfg.models.has(m));
      if (models.length === 0) {
        skip(`limited to models this gateway does not serve (${theirs.join(', ')})`);
        continue;
      }
    }
    const budgetPico = bool(t, 'unlimited_quota') ? null : quotaToPico(int(t, 'remain_quota'), opts.quotaPerUsd);
    const old = theirKeyString(text(t, 'key').trim());
    let key = old;
    const kept = isWellFormedKey(old);
    if (kept && (await db.apiKey.findUnique({ where: { hash: hashApiKey(old) }, select: { id: true } }))) {
      skip('its key string is already a key here');
      continue;
    }
    if (!kept) key = opts.dryRun ? '(a new key)' : generateApiKey().key;
    const detail = [
      kept ? `key kept (${mask(old)})` : `key re-issued (${mask(old)} does not fit this gateway's key format)`,
      budgetPico === null ? 'no budget' : `budget $${formatPico(budgetPico)}`,
      ...(expiresAt ? [`expires ${expiresAt.toISOString()}`] : []),
      ...(models.length ? [`models ${models.join(', ')}`] : []),
    ].join('; ');
    if (kept) report.tokens.kept++;
    else report.tokens.reissued++;
    if (!kept) report.tokens.reissuedKeys.push({ user: owner, old: mask(old), new: key });
    item('create', detail);
    if (opts.dryRun) continue;
    await db.$transaction(async (tx) => {
      const created = await tx.apiKey.create({
        data: {
          userId: owner,
          name: (text(t, 'name').trim() || 'imported').slice(0, 100),
          hash: hashApiKey(key),
          prefix: key.slice(0, 7),
          lastFour: key.slice(-4),
          budgetUsd: budgetPico === null ? null : picoToDecimal(budgetPico),
          expiresAt,
          models,
        },
        select: { id: true },
      });
      await tx.importRecord.create({ data: record('token', id, created.id) });
    });
  }

  // Redemption codes: unused ones, under the same code (only its hash is stored, as for ours).
  const batchId = uuidOf(`import:${source}:redemptions`);
  for (const r of await src.rows('redemptions')) {
    const id = int(r, 'id').toString();
    const item = (action: ReportItem['action'], detail: string) => report.redemptions.items.push({ id, action, detail });
    const skip = (why: string) => {
      report.redemptions.skipped++;
      item('skip', why);
    };
    const done = records.get(`redemption:${id}`);
    if (done) {
      item('exists', 'imported before');
      continue;
    }
    const status = Number(int(r, 'status', 1));
    if (deleted(r) || status !== 1) {
      skip(status === 3 ? 'used there' : deleted(r) ? 'deleted there' : 'disabled there');
      continue;
    }
    const expiredTime = int(r, 'expired_time', 0);
    const expiresAt = expiredTime > 0n ? new Date(Number(expiredTime) * 1000) : null;
    if (expiresAt && expiresAt.getTime() <= now) {
      skip('expired there');
      continue;
    }
    const code = text(r, 'key').trim();
    const amount = quotaToPico(int(r, 'quota'), opts.quotaPerUsd);
    if (!code || amount <= 0n) {
      skip('no code or no value');
      continue;
    }
    const hash = hashCode(code);
    if (await db.redemptionCode.findUnique({ where: { hash }, select: { id: true } })) {
      skip('the same code already exists here');
      continue;
    }
    report.redemptions.imported++;
    item('create', `$${formatPico(amount)}${expiresAt ? `, expires ${expiresAt.toISOString()}` : ''}`);
    if (opts.dryRun) continue;
    await db.$transaction(async (tx) => {
      const created = await tx.redemptionCode.create({
        data: { batchId, hash, lastFour: code.slice(-4).toUpperCase(), amountUsd: picoToDecimal(amount), expiresAt, createdBy: `import:${opts.from}` },
        select: { id: true },
      });
      await tx.importRecord.create({ data: record('redemption', id, created.id) });
    });
  }

  // Channels: a YAML file of channel entries for the operator config.
  const entries: Record<string, unknown>[] = [];
  for (const c of await src.rows('channels')) {
    const id = int(c, 'id').toString();
    const item = (action: ReportItem['action'], detail: string) => report.channels.items.push({ id, action, detail });
    const skip = (why: string) => {
      report.channels.skipped++;
      item('skip', why);
    };
    const type = Number(int(c, 'type'));
    const kind = CHANNEL_TYPES[type];
    const theirName = text(c, 'name');
    if (deleted(c)) {
      skip('deleted there');
      continue;
    }
    if (!kind) {
      skip(`channel type ${type} (${theirName}) speaks no protocol this gateway has (OpenAI, Anthropic, Gemini)`);
      continue;
    }
    const status = Number(int(c, 'status', 1));
    if (status !== 1) {
      skip(`${theirName}: disabled there (status ${status})`);
      continue;
    }
    const baseUrl = baseUrlFor(kind.protocol, text(c, 'base_url').trim(), kind.base);
    if (!baseUrl) {
      skip(`${theirName}: no base URL`);
      continue;
    }
    const theirModels = text(c, 'models')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    const models = theirModels.filter((m) => {
      const model = cfg.models.get(m);
      return model && (model.kind !== 'embedding' || kind.protocol === 'openai');
    });
    const dropped = theirModels.filter((m) => !models.includes(m));
    if (models.length === 0) {
      skip(`${theirName}: none of its models is in this gateway's catalogue (${theirModels.join(', ')})`);
      continue;
    }
    const rawKey = text(c, 'key').trim();
    const keys = rawKey.startsWith('[')
      ? []
      : rawKey
          .split('\n')
          .map((k) => k.trim())
          .filter(Boolean);
    if (keys.length === 0) {
      skip(`${theirName}: no key, or a JSON key list (Vertex-style credentials) this gateway cannot use`);
      continue;
    }
    keys.forEach((k, i) => {
      entries.push({
        name: keys.length > 1 ? `${opts.from}-${id}-k${i + 1}` : `${opts.from}-${id}`,
        protocol: kind.protocol,
        base_url: baseUrl,
        api_key_encrypted: opts.dryRun ? '(encrypted at write)' : encryptSecret(k),
        models,
        priority: Number(int(c, 'priority')),
        weight: Math.max(1, Number(int(c, 'weight'))),
      });
    });
    report.channels.written += keys.length;
    item(
      'create',
      `${theirName} (${kind.name}) → ${kind.protocol} ${baseUrl}, ${keys.length} key(s)${dropped.length ? `; models not in the catalogue left out: ${dropped.join(', ')}` : ''}`,
    );
  }
  report.channels.yaml = entries.length
    ? `# Channels imported from ${opts.from} (${source}). Add them under "channels:" in the operator config;\n# the keys are encrypted with this gateway's SECRETS_KEY.\n` +
      YAML.stringify({ channels: entries })
    : '';
  return report;
}
