// Helpers shared by the benchmarks: /proc readings (CPU time of a process (tree), the local servers'
// pids) and loopback ports (a free one; whether a server listens).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';

export let CLK_TCK = 100;
try {
  CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* 100 on every Linux we care about */
}

export function processTree(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const tid of readdirSync(`/proc/${out[i]}/task`)) {
        const kids = readFileSync(`/proc/${out[i]}/task/${tid}/children`, 'utf8').trim();
        if (kids) for (const k of kids.split(/\s+/)) out.push(Number(k));
      }
    } catch {
      /* gone */
    }
  }
  return out;
}

/** utime+stime of one process, in microseconds (0 once it is gone). */
export function processCpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK; // fields 14 and 15: utime, stime
  } catch {
    return 0;
  }
}

/** utime+stime of the process tree, in microseconds. */
export function cpuMicros(pid) {
  let micros = 0;
  for (const p of processTree(pid)) micros += processCpuMicros(p);
  return micros;
}

/** The local server process with this command name whose parent is not one too (PostgreSQL's postmaster), or null. */
export function serverPid(comm) {
  const read = (pid, file) => {
    try {
      return readFileSync(`/proc/${pid}/${file}`, 'utf8');
    } catch {
      return '';
    }
  };
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || read(d, 'comm').trim() !== comm) continue;
    const stat = read(d, 'stat');
    const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    if (read(ppid, 'comm').trim() !== comm) return Number(d);
  }
  return null;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Whether a server accepts TCP connections at the URL's host and port (redis: 6379, else 5432 by default). */
export function reachable(url, timeoutMs = 1000) {
  return new Promise((resolve) => {
    let u;
    try {
      u = new URL(url);
    } catch {
      return resolve(false);
    }
    const port = Number(u.port || (u.protocol.startsWith('redis') ? 6379 : 5432));
    const sock = net.connect({ host: u.hostname || '127.0.0.1', port });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}
