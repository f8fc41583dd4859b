// A private PostgreSQL 15 cluster for fault tests: initdb in a temporary folder, a free port, trust
// auth; killed hard or stopped and started again. Runs as root the way CI does (initdb refuses root,
// so the PostgreSQL tools run as the postgres user through runuser); as another user they run
// directly. `pgClusterSkip` says why it cannot run here (no PostgreSQL tools).

import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { waitFor } from './accounts';

const run = promisify(execFile);
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** How the PostgreSQL tools are run here, or why they cannot be. */
function pgTools(): { prefix: string[]; owner?: { uid: number; gid: number } } | { skip: string } {
  if (!existsSync(path.join(PG_BIN, 'initdb')) || !existsSync(path.join(PG_BIN, 'pg_ctl'))) return { skip: `no PostgreSQL binaries in ${PG_BIN} (set PG_BIN)` };
  if (process.getuid?.() !== 0) return { prefix: [] };
  const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find(existsSync);
  if (!runuser) return { skip: 'running as root without runuser: initdb refuses root' };
  const id = spawnSync('id', ['postgres'], { encoding: 'utf8' });
  const m = /uid=(\d+).*?gid=(\d+)/.exec(id.stdout ?? '');
  if (id.status !== 0 || !m) return { skip: 'running as root without a postgres user: initdb refuses root' };
  return { prefix: [runuser, '-u', 'postgres', '--'], owner: { uid: Number(m[1]), gid: Number(m[2]) } };
}
const tools = pgTools();
/** Why a private cluster cannot run here, if it cannot. */
export const pgClusterSkip = 'skip' in tools ? tools.skip : undefined;

/** A new private cluster (not started: `init()`). */
export async function newPgCluster(port: number): Promise<Cluster> {
  if ('skip' in tools) throw new Error(tools.skip);
  return new Cluster(port, tools.prefix, tools.owner);
}

/** A private PostgreSQL cluster that can be killed hard and started again. */
export class Cluster {
  readonly dir: string;
  readonly data: string;
  constructor(
    readonly port: number,
    private readonly prefix: string[],
    owner?: { uid: number; gid: number },
  ) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'gw-pg-'));
    if (owner) chownSync(this.dir, owner.uid, owner.gid);
    this.data = path.join(this.dir, 'data');
  }
  get url() {
    return `postgresql://postgres@127.0.0.1:${this.port}/gw`;
  }
  /** One query on a connection of its own (the cluster may have been restarted since the last). */
  async query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const c = new pg.Client({ connectionString: this.url });
    await c.connect();
    try {
      return await c.query(text, values);
    } finally {
      await c.end();
    }
  }
  private tool(name: string, args: string[]) {
    const [cmd, ...rest] = [...this.prefix, path.join(PG_BIN, name), ...args];
    return run(cmd, rest, { cwd: this.dir, timeout: 60_000 });
  }
  async init() {
    await this.tool('initdb', ['-D', this.data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    await this.start();
    const c = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${this.port}/postgres` });
    await c.connect();
    await c.query('CREATE DATABASE gw');
    await c.end();
  }
  start() {
    // fsync off: the test kills processes, not the machine; what a backend wrote is in the page cache.
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
    return this.tool('pg_ctl', ['-D', this.data, '-l', path.join(this.dir, 'postgres.log'), '-o', opts, '-w', '-t', '60', 'start']).catch((err: Error) => {
      throw new Error(`${err.message}\n${this.log().slice(-2000)}`);
    });
  }
  /** SIGKILL to the postmaster and all its children at once: no shutdown, no checkpoint. */
  async kill(): Promise<number[]> {
    const postmaster = Number(readFileSync(path.join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const pids = [postmaster, ...childrenOf(postmaster)];
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await waitFor(async () => pids.every((pid) => !alive(pid)), 10_000);
    // A killed postmaster may stay a zombie until init reaps it, and a restart refuses to start
    // while a lock file names a process that exists: it is dead, so its locks go.
    rmSync(path.join(this.data, 'postmaster.pid'), { force: true });
    rmSync(path.join(this.dir, `.s.PGSQL.${this.port}.lock`), { force: true });
    return pids;
  }
  log() {
    return existsSync(path.join(this.dir, 'postgres.log')) ? readFileSync(path.join(this.dir, 'postgres.log'), 'utf8') : '';
  }
  async destroy() {
    if (existsSync(path.join(this.data, 'postmaster.pid')))
      await this.tool('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function statOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
}
/** Running (a zombie waiting for its reaper counts as gone). */
export function alive(pid: number): boolean {
  const stat = statOf(pid);
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      const stat = statOf(pid);
      return stat !== undefined && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
    });
}
