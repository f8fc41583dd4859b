/**
 * Standalone fake upstream:
 *   npx tsx tests/support/fake-upstream-cli.ts --port 0 --chunk-delay 0 [--reply "text"] [--dims model=256,...]
 * Prints one JSON line {"url": ..., "port": ...} on stdout once listening; exits on SIGTERM/SIGINT.
 * Faults can be driven over HTTP via the /__fake/* control endpoints (see fake-upstream.ts).
 */
import { startFakeUpstream, type FakeUpstreamOptions } from './fake-upstream';

function parseArgs(argv: string[]): FakeUpstreamOptions {
  const opts: FakeUpstreamOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq >= 0) return arg.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`missing value for ${name}`);
      return v;
    };
    switch (name) {
      case '--port':
        opts.port = Number(value());
        break;
      case '--chunk-delay':
        opts.chunkDelayMs = Number(value());
        break;
      case '--reply':
        opts.reply = value();
        break;
      case '--dims': {
        const dims: Record<string, number> = {};
        for (const pair of value().split(',')) {
          const [model, n] = pair.split('=');
          if (model && n) dims[model] = Number(n);
        }
        opts.dims = dims;
        break;
      }
      default:
        throw new Error(`unknown argument: ${arg}`);
    }
  }
  for (const [k, v] of Object.entries({ port: opts.port, chunkDelayMs: opts.chunkDelayMs })) {
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new Error(`invalid ${k}: ${String(v)}`);
  }
  return opts;
}

async function main(): Promise<void> {
  const fake = await startFakeUpstream(parseArgs(process.argv.slice(2)));
  process.stdout.write(JSON.stringify({ url: fake.url, port: fake.port }) + '\n');
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(0), 2000);
    force.unref();
    fake.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`fake-upstream: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
