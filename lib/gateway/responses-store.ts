// Stored responses (POST /v1/responses with store: true): written before the response's last bytes
// go out, so a GET or a previous_response_id right after finds it on any instance. Read only by
// requests that name an id: a request without previous_response_id never touches this table.
// Expired rows are never returned; they are deleted when found, and by a sweep that runs with
// some of the writes (no timer: an idle gateway keeps nothing it would have to sweep).
//
// Bounded (issue 37):
// - a row holds its own turn only (input and reply) and the id of the turn it continued; a chain
//   is read link by link, its sizes first (without the texts), and refused past the request body
//   cap: it could not go upstream anyway. Continuing a chain extends its earlier turns' expiry to
//   the new one's, so a live response never loses the start of its conversation to retention;
// - a turn larger than the body cap is not stored (it could never be continued);
// - an account keeps at most `responses.max_bytes_per_account` bytes and `max_per_account`
//   responses: past either, its oldest are evicted as the new one is written;
// - input_items pages read the chain's rows one at a time, the conversation column only.
import { isObject, objectsOf } from '@/lib/gateway/translate/wire/json';
import { Prisma } from '@/lib/generated/prisma/client';
import { getDb } from '@/lib/db';
import { GatewayError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import type { ChatMessage, FinishedResponse } from '@/lib/gateway/translate/responses-chat';
import type { JsonObject } from '@/lib/gateway/body';

const DAY_MS = 24 * 60 * 60 * 1000;
/** One write in this many also deletes expired rows (bounded: the sweep never grows with the backlog). */
const SWEEP_EVERY = 100;
const SWEEP_BATCH = 1000;
/** Turns one conversation may have (each continuation reads its chain's links). */
export const MAX_CHAIN_TURNS = 1000;
let writes = 0;

export interface StoreLimits {
  retentionDays: number;
  /** The largest turn stored, and the largest conversation continued (the request body cap). */
  maxBytes: number;
  /** Per-account quota. */
  quota: { bytes: number; rows: number };
}

/** A conversation read for previous_response_id: its messages (oldest first) and its responses. */
export interface StoredHistory {
  messages: ChatMessage[];
  ids: string[];
}

const at = (d: Date) => Prisma.sql`CAST(${d.toISOString()} AS timestamp)`;

/**
 * Stores a finished turn; false when it was not stored (larger than `maxBytes`). `history` is the
 * conversation it continued: the new row links to its newest response, and its rows live as long.
 */
export async function saveResponse(
  userId: string,
  model: string,
  finished: FinishedResponse,
  history: StoredHistory | null,
  limits: StoreLimits,
): Promise<boolean> {
  const conversation = JSON.stringify(finished.conversation);
  const conversationBytes = Buffer.byteLength(conversation);
  const responseBytes = Buffer.byteLength(finished.text);
  if (conversationBytes + responseBytes > limits.maxBytes) {
    log('warn', 'response not stored: larger than the body cap', { responseId: finished.id, bytes: conversationBytes + responseBytes });
    return false;
  }
  const db = await getDb();
  const now = Date.now();
  const expiresAt = new Date(now + limits.retentionDays * DAY_MS);
  await db.storedResponse.create({
    data: {
      id: finished.id,
      userId,
      model,
      response: finished.text,
      conversation,
      previousId: history?.ids.at(-1) ?? null,
      conversationBytes,
      responseBytes,
      itemIds: finished.itemIds ?? [],
      createdAt: new Date(now),
      expiresAt,
    },
  });
  if (history && history.ids.length > 0) {
    // Rows already within a day of the new expiry are left alone: a long conversation rewrites its
    // earlier turns about once a day, not at every turn.
    const stale = new Date(expiresAt.getTime() - DAY_MS);
    await db.storedResponse.updateMany({ where: { id: { in: history.ids }, userId, expiresAt: { lt: stale } }, data: { expiresAt } });
  }
  await evictOverQuota(userId, limits.quota);
  if (++writes % SWEEP_EVERY === 0) void sweepExpired();
  return true;
}

/** Deletes the account's oldest responses past its quota (bytes or rows), newest kept first. */
async function evictOverQuota(userId: string, quota: { bytes: number; rows: number }): Promise<void> {
  const db = await getDb();
  const evicted = await db.$executeRaw`
    DELETE FROM "StoredResponse" WHERE id IN (
      SELECT id FROM (
        SELECT id,
               sum("conversationBytes" + "responseBytes") OVER w AS upto,
               row_number() OVER w AS n
        FROM "StoredResponse" WHERE "userId" = CAST(${userId} AS uuid)
        WINDOW w AS (ORDER BY "createdAt" DESC, id DESC)
      ) ranked
      WHERE upto > ${quota.bytes} OR n > ${quota.rows}
    )`;
  if (evicted > 0) log('info', 'stored responses evicted over the account quota', { userId, evicted });
}

/** A live response of this account (its Response text); null when unknown, another account's, or expired. */
export async function loadResponse(userId: string, id: string): Promise<{ id: string; response: string } | null> {
  const db = await getDb();
  const row = await db.storedResponse.findUnique({ where: { id }, select: { id: true, userId: true, response: true, expiresAt: true } });
  if (!row || row.userId !== userId) return null;
  if (row.expiresAt.getTime() <= Date.now()) {
    void db.storedResponse.deleteMany({ where: { id } }).catch(() => undefined);
    return null;
  }
  return { id: row.id, response: row.response };
}

interface Link {
  id: string;
  previousId: string | null;
  conversationBytes: number;
  total: bigint | number;
}

/**
 * The links of a response's chain, newest first: ids and sizes only, one query. The walk stops
 * after the link that takes the conversation past `maxBytes` (the caller refuses it then).
 */
async function chainLinks(userId: string, id: string, maxBytes: number): Promise<Link[]> {
  const db = await getDb();
  const now = at(new Date());
  return db.$queryRaw<Link[]>`
    WITH RECURSIVE chain AS (
      SELECT id, "previousId", "conversationBytes", 1 AS depth, CAST("conversationBytes" AS bigint) AS total
      FROM "StoredResponse" WHERE id = ${id} AND "userId" = CAST(${userId} AS uuid) AND "expiresAt" > ${now}
      UNION ALL
      SELECT s.id, s."previousId", s."conversationBytes", c.depth + 1, c.total + s."conversationBytes"
      FROM "StoredResponse" s JOIN chain c ON s.id = c."previousId"
      WHERE s."userId" = CAST(${userId} AS uuid) AND s."expiresAt" > ${now} AND c.total <= ${maxBytes} AND c.depth < ${MAX_CHAIN_TURNS}
    )
    SELECT id, "previousId", "conversationBytes", total FROM chain ORDER BY depth`;
}

function parseConversation(text: string): ChatMessage[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter(isObject) : [];
  } catch {
    return [];
  }
}

/**
 * The conversation through response `id` (previous_response_id), oldest first; null when the
 * response is unknown. A conversation over `maxBytes`, longer than MAX_CHAIN_TURNS, or missing an
 * earlier turn (deleted, evicted) is refused: a 400 or 404 naming previous_response_id.
 */
export async function loadHistory(userId: string, id: string, maxBytes: number): Promise<StoredHistory | null> {
  const links = await chainLinks(userId, id, maxBytes);
  if (links.length === 0) return null;
  const last = links[links.length - 1];
  if (Number(last.total) > maxBytes) {
    throw new GatewayError(
      'invalid_request',
      `The conversation of previous_response_id '${id}' is larger than ${maxBytes} bytes, the request limit: start a new conversation or send fewer turns as input.`,
      { param: 'previous_response_id' },
    );
  }
  if (last.previousId !== null) {
    if (links.length >= MAX_CHAIN_TURNS) {
      throw new GatewayError('invalid_request', `The conversation of previous_response_id '${id}' has more than ${MAX_CHAIN_TURNS} turns.`, {
        param: 'previous_response_id',
      });
    }
    throw new GatewayError(
      'not_found',
      `Response with id '${last.previousId}', an earlier turn of previous_response_id '${id}', not found (deleted, expired or evicted).`,
      { param: 'previous_response_id' },
    );
  }
  const db = await getDb();
  const rows = await db.storedResponse.findMany({ where: { id: { in: links.map((l) => l.id) }, userId }, select: { id: true, conversation: true } });
  const byId = new Map(rows.map((r) => [r.id, r.conversation]));
  const ids = links.map((l) => l.id).reverse();
  const messages: ChatMessage[] = [];
  for (const linkId of ids) messages.push(...parseConversation(byId.get(linkId) ?? '[]'));
  return { messages, ids };
}

/**
 * An output item of one of this account's responses: by the response its id names (items the
 * gateway minted: msg_X, rs_X, fc_X_n of resp_X), else among the output ids recorded for natively
 * served responses. Null when the account has no such item.
 */
export async function findItem(userId: string, itemId: string, responseOfItem: (id: string) => string | undefined): Promise<JsonObject | null> {
  const responseId = responseOfItem(itemId);
  const own = responseId ? await loadResponse(userId, responseId) : null;
  const fromOwn = own && outputOf(own.response).find((o) => o.id === itemId);
  if (fromOwn) return fromOwn;
  const db = await getDb();
  const row = await db.storedResponse.findFirst({
    where: { userId, itemIds: { has: itemId }, expiresAt: { gt: new Date() } },
    select: { response: true },
  });
  return (row && outputOf(row.response).find((o) => o.id === itemId)) || null;
}

function outputOf(responseText: string): JsonObject[] {
  try {
    const parsed: unknown = JSON.parse(responseText);
    return isObject(parsed) ? objectsOf(parsed.output) : [];
  } catch {
    return [];
  }
}

/**
 * The messages of response `id`'s chain for a page of input items: `visit` is called with each
 * turn's messages and its response id, in the order asked (newest turn first for `desc`), one row
 * read at a time, until it answers false. False when the response is unknown.
 */
export async function walkConversation(
  userId: string,
  id: string,
  order: 'asc' | 'desc',
  visit: (messages: ChatMessage[], responseId: string) => boolean,
): Promise<boolean> {
  const links = await chainLinks(userId, id, Number.MAX_SAFE_INTEGER);
  if (links.length === 0) return false;
  const ids = links.map((l) => l.id);
  if (order === 'asc') ids.reverse();
  const db = await getDb();
  for (const linkId of ids) {
    const row = await db.storedResponse.findUnique({ where: { id: linkId }, select: { conversation: true } });
    if (!visit(parseConversation(row?.conversation ?? '[]'), linkId)) break;
  }
  return true;
}

/** Deletes this account's response; false when there was none (or it had expired). */
export async function deleteResponse(userId: string, id: string): Promise<boolean> {
  const db = await getDb();
  const { count } = await db.storedResponse.deleteMany({ where: { id, userId, expiresAt: { gt: new Date() } } });
  return count > 0;
}

/** Deletes up to SWEEP_BATCH expired rows. */
export async function sweepExpired(): Promise<number> {
  try {
    const db = await getDb();
    const expired = await db.storedResponse.findMany({ where: { expiresAt: { lte: new Date() } }, select: { id: true }, take: SWEEP_BATCH });
    if (expired.length === 0) return 0;
    const { count } = await db.storedResponse.deleteMany({ where: { id: { in: expired.map((r) => r.id) } } });
    return count;
  } catch (err) {
    log('warn', 'stored responses sweep failed', errorFields(err));
    return 0;
  }
}
