// Stored responses (POST /v1/responses with store: true): written before the response's last bytes
// go out, so a GET or a previous_response_id right after finds it on any instance. Read only by
// requests that name an id: a request without previous_response_id never touches this table.
// Expired rows are never returned; they are deleted when found, and by a sweep that runs with
// some of the writes (no timer: an idle gateway keeps nothing it would have to sweep).
import { getDb } from '@/lib/db';
import { log, errorFields } from '@/lib/log';
import type { ChatMessage, FinishedResponse } from '@/lib/gateway/translate/responses-chat';

const DAY_MS = 24 * 60 * 60 * 1000;
/** One write in this many also deletes expired rows (bounded: the sweep never grows with the backlog). */
const SWEEP_EVERY = 100;
const SWEEP_BATCH = 1000;
let writes = 0;

export interface StoredResponseRow {
  id: string;
  response: string;
  conversation: ChatMessage[];
}

export async function saveResponse(userId: string, model: string, finished: FinishedResponse, retentionDays: number): Promise<void> {
  const db = await getDb();
  const now = Date.now();
  await db.storedResponse.create({
    data: {
      id: finished.id,
      userId,
      model,
      response: finished.text,
      conversation: JSON.stringify(finished.conversation),
      createdAt: new Date(now),
      expiresAt: new Date(now + retentionDays * DAY_MS),
    },
  });
  if (++writes % SWEEP_EVERY === 0) void sweepExpired();
}

/** A live response of this account; null when unknown, another account's, or expired. */
export async function loadResponse(userId: string, id: string): Promise<StoredResponseRow | null> {
  const db = await getDb();
  const row = await db.storedResponse.findUnique({ where: { id } });
  if (!row || row.userId !== userId) return null;
  if (row.expiresAt.getTime() <= Date.now()) {
    void db.storedResponse.deleteMany({ where: { id } }).catch(() => undefined);
    return null;
  }
  let conversation: ChatMessage[];
  try {
    conversation = JSON.parse(row.conversation) as ChatMessage[];
  } catch {
    conversation = [];
  }
  return { id: row.id, response: row.response, conversation };
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
