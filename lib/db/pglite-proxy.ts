import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { messages, type PGlite, type QueryOptions, type Results } from '@electric-sql/pglite';

// PGlite in its own thread (lib/db/pglite-worker.mjs), behind the part of PGlite's interface that
// pglite-prisma-adapter and the migration runner use: query, exec, transaction. PGlite executes SQL
// synchronously in WebAssembly, so in the request thread every batch write of the log writer held
// the event loop (and every request behind it) for its whole duration; here the request thread
// only posts a message and structured-clones the reply.

type SerializedError = { message: string; name?: string; database?: boolean; length?: number } & Record<string, unknown>;
type Reply = { id: number; result?: unknown; error?: SerializedError } | { ready: true };

export interface PgliteTransactionLike {
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(sql: string, options?: QueryOptions): Promise<Results[]>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

/** The PGlite surface this project uses. */
export interface PgliteLike {
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(sql: string, options?: QueryOptions): Promise<Results[]>;
  transaction<T>(fn: (tx: PgliteTransactionLike) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

function workerPath(): string {
  // By path from the project root (as prisma/migrations): the server bundle, Next's route bundle,
  // tsx and Vitest each place this module elsewhere.
  return path.resolve(process.cwd(), 'lib', 'db', 'pglite-worker.mjs');
}

function toError(e: SerializedError): Error {
  if (e.database) {
    const err = new messages.DatabaseError(e.message, e.length ?? 0, 'error');
    for (const [k, v] of Object.entries(e))
      if (k !== 'message' && k !== 'database' && k !== 'length' && k !== 'name') (err as unknown as Record<string, unknown>)[k] = v;
    return err;
  }
  const err = new Error(e.message);
  if (e.name) err.name = e.name;
  return err;
}

type Parsers = NonNullable<QueryOptions['parsers']>;

/** Applies the caller's parsers (functions cannot cross threads: those columns came back as text). */
function applyParsers<T>(res: Results<T>, parsers: Parsers, arrayMode: boolean): Results<T> {
  const fields = res.fields;
  const cols: { i: number; name: string; parse: (v: string, t: number) => unknown; type: number }[] = [];
  fields.forEach((f, i) => {
    const parse = parsers[f.dataTypeID] as Parsers[number] | undefined;
    if (parse) cols.push({ i, name: f.name, parse, type: f.dataTypeID });
  });
  if (!cols.length) return res;
  for (const row of res.rows as unknown as Record<string | number, unknown>[]) {
    for (const c of cols) {
      const key = arrayMode ? c.i : c.name;
      const v = row[key];
      if (typeof v === 'string') row[key] = c.parse(v, c.type);
    }
  }
  return res;
}

export class PgliteWorkerProxy implements PgliteLike {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private failure: Error | undefined;
  readonly ready: Promise<void>;

  private constructor(dataDir: string, startParams: string[]) {
    this.worker = new Worker(workerPath(), { workerData: { dataDir, startParams } });
    // Idle, the thread must not keep a process (the admin CLI) alive; while calls are pending it must.
    this.worker.unref();
    let onReady!: () => void;
    let onFail!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      onReady = res;
      onFail = rej;
    });
    this.worker.ref();
    this.worker.on('message', (msg: Reply) => {
      if ('ready' in msg) {
        this.worker.unref();
        return onReady();
      }
      const call = this.pending.get(msg.id);
      if (!call) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) this.worker.unref();
      if (msg.error) call.reject(toError(msg.error));
      else call.resolve(msg.result);
    });
    const fail = (err: Error) => {
      this.failure = err;
      onFail(err);
      for (const call of this.pending.values()) call.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the embedded database thread exited (code ${code})`)));
  }

  /** `startParams`: server settings added to PGlite's defaults (`-c name=value` pairs). */
  static async start(dataDir: string, startParams: string[] = []): Promise<PgliteWorkerProxy> {
    const proxy = new PgliteWorkerProxy(dataDir, startParams);
    await proxy.ready;
    return proxy;
  }

  private call<T>(msg: Record<string, unknown>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        this.worker.postMessage({ ...msg, id });
      } catch (err) {
        // Not cloneable (a function in the options): nothing was sent, nothing will answer.
        this.pending.delete(id);
        if (this.pending.size === 0) this.worker.unref();
        reject(err as Error);
      }
    });
  }

  private async runQuery<T>(sql: string, params: unknown[] | undefined, options: QueryOptions | undefined, tx?: number): Promise<Results<T>> {
    const { parsers, ...rest } = options ?? {};
    const parserTypes = parsers ? Object.keys(parsers).map(Number) : undefined;
    const res = await this.call<Results<T>>({ op: 'query', sql, params, options: options ? { ...rest, parserTypes } : undefined, tx });
    return parsers ? applyParsers(res, parsers, rest.rowMode === 'array') : res;
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.runQuery<T>(sql, params, options);
  }

  exec(sql: string, options?: QueryOptions): Promise<Results[]> {
    if (options?.parsers) throw new Error('exec with parsers is not supported by the worker proxy');
    return this.call<Results[]>({ op: 'exec', sql, options });
  }

  async transaction<T>(fn: (tx: PgliteTransactionLike) => Promise<T>): Promise<T> {
    const id = this.nextId; // the begin call's id names the transaction in the worker
    await this.call({ op: 'begin' });
    let closed = false;
    let rolledBack: Promise<void> | undefined;
    const ensureOpen = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx: PgliteTransactionLike = {
      query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => (ensureOpen(), this.runQuery<R>(sql, params, options, id)),
      exec: async (sql: string, options?: QueryOptions) => (ensureOpen(), this.call<Results[]>({ op: 'exec', sql, options, tx: id })),
      rollback: () => {
        ensureOpen();
        closed = true;
        rolledBack = this.call<void>({ op: 'rollback', tx: id });
        return rolledBack;
      },
      get closed() {
        return closed;
      },
    };
    try {
      const result = await fn(tx);
      if (rolledBack) await rolledBack;
      else {
        closed = true;
        await this.call({ op: 'commit', tx: id });
      }
      return result;
    } catch (err) {
      if (!closed) {
        closed = true;
        await this.call({ op: 'rollback', tx: id }).catch(() => undefined);
      } else if (rolledBack) await rolledBack.catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.call({ op: 'close' }).catch(() => undefined);
    await this.worker.terminate();
  }
}

/** The adapter is typed for PGlite; the proxy implements the part of it the adapter calls. */
export function asPglite(proxy: PgliteLike): PGlite {
  return proxy as unknown as PGlite;
}
