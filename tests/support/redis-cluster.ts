// A real Redis Cluster for tests: three primaries and three replicas (redis-server
// --cluster-enabled yes in a temporary directory, joined by redis-cli --cluster create), on free
// local ports. Fast failover (cluster-node-timeout 1000 ms) so that a killed primary's replica takes
// its slots over in a few seconds.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './gateway';

export interface TestCluster {
  /** Every node, primaries first as created ({ host, port }). */
  nodes: { host: string; port: number }[];
  /** REDIS_CLUSTER_NODES for the gateway. */
  env: string;
  /** The port of the primary serving a key's slot now. */
  primaryOf(key: string): Promise<number>;
  /** SIGKILLs the node on this port. */
  kill(port: number): Promise<void>;
  /** Waits until every slot is served again (cluster_state:ok as every live node sees it). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

async function ping(port: number): Promise<boolean> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

async function clusterOk(port: number): Promise<boolean> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return /cluster_state:ok/.test(String(await c.call('CLUSTER', 'INFO')));
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

export async function startRedisCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-cluster-'));
  const ports: number[] = [];
  while (ports.length < 6) {
    const p = await freePort();
    // Cluster bus port = port + 10000: keep both in range and distinct.
    if (p < 55_000 && !ports.includes(p)) ports.push(p);
  }
  const procs = new Map<number, ChildProcess>();
  for (const port of ports) {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        '--repl-diskless-sync-delay',
        '0',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--loglevel',
        'notice',
        '--logfile',
        `redis-${port}.log`,
      ],
      { stdio: 'ignore' },
    );
    procs.set(port, child);
  }
  const stop = async () => {
    for (const child of procs.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await sleep(50);
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', () => {
    for (const child of procs.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  try {
    for (const port of ports) {
      for (let i = 0; !(await ping(port)); i++) {
        if (i > 100) throw new Error(`redis-server on ${port} did not start`);
        await sleep(50);
      }
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}\n${create.stderr}`);
  } catch (err) {
    await stop();
    throw err;
  }
  const cluster: TestCluster = {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    env: ports.map((p) => `127.0.0.1:${p}`).join(','),
    async primaryOf(key) {
      for (const port of ports) {
        const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
        c.on('error', () => undefined);
        try {
          await c.connect();
          const slot = Number(await c.call('CLUSTER', 'KEYSLOT', key));
          const slots = (await c.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][];
          const range = slots.find(([from, to]) => slot >= from && slot <= to);
          if (range) return Number(range[2][1]);
        } catch {
          /* a dead node: ask the next */
        } finally {
          c.disconnect();
        }
      }
      throw new Error(`no live node knows the slot of ${key}`);
    },
    async kill(port) {
      const child = procs.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async waitHealthy(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const live = [...procs].filter(([, c]) => c.exitCode === null && c.signalCode === null).map(([p]) => p);
        const states = await Promise.all(live.map(clusterOk));
        if (states.every(Boolean)) return;
        if (Date.now() > deadline) throw new Error('the Redis Cluster did not become healthy');
        await sleep(100);
      }
    },
    stop,
  };
  await cluster.waitHealthy();
  // Replicas must have synced before a failover can promote one.
  const deadline = Date.now() + 20_000;
  for (const port of ports) {
    for (;;) {
      const out = spawnSync('redis-cli', ['-p', String(port), 'info', 'replication'], { encoding: 'utf8' }).stdout;
      if (!/role:slave/.test(out) || /master_link_status:up/.test(out)) break;
      if (Date.now() > deadline) throw new Error(`replica ${port} did not sync`);
      await sleep(100);
    }
  }
  return cluster;
}
