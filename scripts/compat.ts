// npm run compat [-- <client name>...]: the real coding agents of scripts/compat/clients/*.ts, pinned
// and installed outside the repo (COMPAT_CLIENTS_DIR, default ~/.cache/model-gateway-compat), each
// asked to create a file through the built gateway (lean) on a model of each channel protocol, with a
// fake upstream that answers with the one tool call that creates it (tests/support/file-task.ts).
// Prints the matrix; exits 1 on any FAIL. Needs PostgreSQL and Redis as the tests do (DATABASE_URL,
// REDIS_URL): a private database is made and dropped. COMPAT_RECORD=<dir> also writes every request
// a client sent to the gateway there (method, path, headers, body), for fixtures.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import setupDatabase from '../tests/global-setup';
import { startFakeUpstream } from '../tests/support/fake-upstream';
import { PROTOCOL_MODELS, ROOT, startGateway, testConfig, type Protocol } from '../tests/support/gateway';
import type { CompatClient, CompatResult } from './compat/types';

const RUN_TIMEOUT_MS = 240_000;
const clientsDir = path.resolve(process.env.COMPAT_CLIENTS_DIR || path.join(os.homedir(), '.cache', 'model-gateway-compat'));
const recordDir = process.env.COMPAT_RECORD ? path.resolve(process.env.COMPAT_RECORD) : undefined;

async function loadClients(only: string[]): Promise<CompatClient[]> {
  const dir = path.join(ROOT, 'scripts', 'compat', 'clients');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .sort();
  const clients: CompatClient[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { default: CompatClient };
    if (only.length === 0 || only.includes(mod.default.name)) clients.push(mod.default);
  }
  return clients;
}

/** `name@version` -> [name, version] (scoped names keep their @). */
function splitSpec(spec: string): [string, string | undefined] {
  const at = spec.lastIndexOf('@');
  return at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, undefined];
}

function installedVersion(name: string): string | undefined {
  const file = path.join(clientsDir, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version;
}

/** Installs the specs not present at their pinned version into clientsDir. */
function install(clients: CompatClient[]): void {
  mkdirSync(clientsDir, { recursive: true });
  const pkg = path.join(clientsDir, 'package.json');
  if (!existsSync(pkg)) writeFileSync(pkg, JSON.stringify({ name: 'model-gateway-compat-clients', private: true }, null, 2));
  const missing = clients
    .flatMap((c) => c.packages)
    .filter((spec) => {
      const [name, version] = splitSpec(spec);
      const have = installedVersion(name);
      return have === undefined || (version !== undefined && have !== version);
    });
  if (missing.length === 0) return;
  console.log(`installing into ${clientsDir}: ${missing.join(' ')}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', clientsDir, ...missing], { stdio: 'inherit' });
}

/** A pass-through proxy in front of the gateway that writes each request it carries to recordDir. */
async function recordingProxy(target: string, dir: string): Promise<{ url: string; close(): Promise<void> }> {
  mkdirSync(dir, { recursive: true });
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const name = `${String(++n).padStart(3, '0')}-${req.method}-${(req.url ?? '/').replace(/[^A-Za-z0-9]+/g, '_').slice(0, 60)}.json`;
      const headers = { ...req.headers };
      for (const secret of ['authorization', 'x-api-key', 'x-goog-api-key']) if (headers[secret]) headers[secret] = '<redacted>';
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      writeFileSync(path.join(dir, name), JSON.stringify({ method: req.method, path: req.url, headers, body: json ?? body.toString('utf8') }, null, 2));
      const up = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function timeout(ms: number): Promise<CompatResult> {
  return new Promise((resolve) => setTimeout(() => resolve({ ok: false, detail: `no result in ${ms / 1000} s` }), ms).unref());
}

async function main(): Promise<number> {
  const clients = await loadClients(process.argv.slice(2));
  if (clients.length === 0) {
    console.error('no client modules selected (scripts/compat/clients/*.ts)');
    return 1;
  }
  install(clients);
  execFileSync(process.execPath, ['scripts/build-server.mjs'], { cwd: ROOT, stdio: 'inherit' });
  process.env.LOG_LEVEL ??= 'warn';
  const dropDatabase = await setupDatabase();
  const fake = await startFakeUpstream({ fileTask: true });
  const gateway = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] }), mode: 'lean' });
  const proxy = recordDir ? await recordingProxy(gateway.url, recordDir) : undefined;
  // Imported once setupDatabase has pointed DATABASE_URL at the private database.
  const { createAccount } = await import('../tests/support/accounts');
  const account = await createAccount({ tier: 'pro', balanceUsd: '100' });
  const protocols = Object.keys(PROTOCOL_MODELS) as Protocol[];
  const rows: { client: string; cells: Record<string, CompatResult> }[] = [];
  try {
    for (const client of clients) {
      const cells: Record<string, CompatResult> = {};
      for (const protocol of protocols) {
        const workdir = mkdtempSync(path.join(os.tmpdir(), `compat-${client.name}-${protocol}-`));
        const ctx = { clientsDir, baseUrl: proxy?.url ?? gateway.url, apiKey: account.apiKey, model: PROTOCOL_MODELS[protocol], workdir };
        const started = Date.now();
        cells[protocol] = await Promise.race([
          client.run(ctx).catch((err: unknown): CompatResult => ({ ok: false, detail: `threw: ${(err as Error).message}` })),
          timeout(RUN_TIMEOUT_MS),
        ]);
        console.log(`${client.name}@${client.version} on ${protocol} (${ctx.model}): ${cells[protocol].ok ? 'PASS' : 'FAIL'} in ${Date.now() - started} ms`);
        if (cells[protocol].ok) rmSync(workdir, { recursive: true, force: true });
      }
      rows.push({ client: `${client.name}@${client.version}`, cells });
    }
  } finally {
    await proxy?.close();
    await gateway.stop();
    await fake.close();
    await dropDatabase();
  }
  printMatrix(rows, protocols);
  return rows.some((r) => Object.values(r.cells).some((c) => !c.ok)) ? 1 : 0;
}

function printMatrix(rows: { client: string; cells: Record<string, CompatResult> }[], protocols: Protocol[]): void {
  const cell = (r: CompatResult) => `${r.ok ? 'PASS' : 'FAIL'}: ${r.detail.replace(/\s+/g, ' ').slice(0, 70)}`;
  const header = ['client', ...protocols.map((p) => `${p} (${PROTOCOL_MODELS[p]})`)];
  const table = [header, ...rows.map((r) => [r.client, ...protocols.map((p) => cell(r.cells[p]!))])];
  const widths = header.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  console.log('');
  for (const line of table) console.log(line.map((c, i) => c.padEnd(widths[i]!)).join(' | '));
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
