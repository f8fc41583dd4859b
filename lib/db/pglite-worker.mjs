// The embedded database's own thread (started by lib/db/pglite-proxy.ts). PGlite runs PostgreSQL
// compiled to WebAssembly synchronously: in the request thread a batch insert holds the event loop
// for its whole duration. Here it holds only this thread; the request thread posts a message and
// awaits the reply.
//
// Plain JavaScript on purpose: it is loaded by path from the server bundle, the Next.js route
// bundle, tsx (admin CLI) and Vitest alike, none of which would compile it.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const ERROR_FIELDS = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
];

function serializeError(err) {
  if (!(err instanceof Error)) return { message: String(err) };
  const out = {
    message: err.message,
    name: err.name,
    database: err.constructor?.name === 'DatabaseError' || typeof err.severity === 'string',
    length: err.length,
  };
  for (const f of ERROR_FIELDS) if (err[f] !== undefined) out[f] = err[f];
  return out;
}

const passThrough = (value) => value;

/** The caller's parsers are functions (they cannot cross threads): those types come back as text, parsed there. */
function queryOptions(opts) {
  if (!opts) return undefined;
  const { parserTypes, ...rest } = opts;
  if (parserTypes?.length) rest.parsers = Object.fromEntries(parserTypes.map((t) => [t, passThrough]));
  return rest;
}

const db = await PGlite.create(workerData.dataDir, { startParams: [...PGlite.defaultStartParams, ...(workerData.startParams ?? [])] });
/** Open transactions: their handle inside PGlite's transaction callback, and how to end it. */
const txs = new Map();

async function run(msg) {
  switch (msg.op) {
    case 'query': {
      const target = msg.tx ? txs.get(msg.tx)?.tx : db;
      if (!target) throw new Error('transaction is closed');
      return target.query(msg.sql, msg.params, queryOptions(msg.options));
    }
    case 'exec': {
      const target = msg.tx ? txs.get(msg.tx)?.tx : db;
      if (!target) throw new Error('transaction is closed');
      return target.exec(msg.sql, queryOptions(msg.options));
    }
    case 'begin': {
      // PGlite's own transaction() holds its lock: other queries wait for this one to end, as in-process.
      return new Promise((began, failed) => {
        const entry = {};
        entry.done = db
          .transaction(
            (tx) =>
              new Promise((end) => {
                entry.tx = tx;
                entry.end = end;
                txs.set(msg.id, entry);
                began(null);
              }),
          )
          .finally(() => txs.delete(msg.id));
        entry.done.catch(failed);
      });
    }
    case 'commit':
    case 'rollback': {
      const entry = txs.get(msg.tx);
      if (!entry) throw new Error('transaction is closed');
      if (msg.op === 'rollback' && !entry.tx.closed) await entry.tx.rollback();
      entry.end();
      await entry.done;
      return null;
    }
    case 'close':
      await db.close();
      return null;
    default:
      throw new Error(`unknown operation ${msg.op}`);
  }
}

parentPort.on('message', (msg) => {
  run(msg).then(
    (result) => parentPort.postMessage({ id: msg.id, result }),
    (err) => parentPort.postMessage({ id: msg.id, error: serializeError(err) }),
  );
});
parentPort.postMessage({ ready: true });
