// The end of a browser test file that talks to the database, the limiter and the event bus itself:
// what it started, then this process's own clients of those, so that vitest can exit.
import type { Browser } from 'playwright-core';
import type { RunningGateway } from './gateway';
import type { FakeUpstream } from './fake-upstream';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

/** Each part may be missing: the setup may have failed before starting it. */
export async function closeBrowserTest({ browser, gw, fake }: { browser?: Browser; gw?: RunningGateway; fake?: FakeUpstream }): Promise<void> {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
}
