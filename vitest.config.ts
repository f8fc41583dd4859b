import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import path from 'node:path';

/** The default order, with the run-wide log-secret scan last (it reads what every other file logged). */
class LogScanLast extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isScan = (f: TestSpecification) => f.moduleId.endsWith('zz-log-secret-scan.test.ts');
    return [...sorted.filter((f) => !isScan(f)), ...sorted.filter(isScan)];
  }
}

export default defineConfig({
  resolve: { alias: { '@': path.resolve(__dirname) } },
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    globalSetup: ['tests/global-setup.ts'],
    setupFiles: ['tests/setup-file.ts'],
    sequence: { sequencer: LogScanLast },
  },
});
