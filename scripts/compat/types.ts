// The contract between `npm run compat` (scripts/compat.ts) and a client module in
// scripts/compat/clients/*.ts: one real client, pinned, run once per model.

export interface CompatContext {
  /** The scratch folder the runner installed `packages` into (its node_modules/ holds them). */
  clientsDir: string;
  /** The gateway's origin, e.g. http://127.0.0.1:41234 (no path). */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** An empty temporary folder: the run succeeds when the file the task asks for exists there (tests/support/file-task.ts). */
  workdir: string;
}

export interface CompatResult {
  ok: boolean;
  /** A short reason, shown in the matrix. */
  detail: string;
}

export interface CompatClient {
  name: string;
  version: string;
  /** npm specs installed into clientsDir when missing (never into the repo's package.json). */
  packages: string[];
  run(ctx: CompatContext): Promise<CompatResult>;
}
