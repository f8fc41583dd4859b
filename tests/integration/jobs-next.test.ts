// The route-handler server path (`next start`): the job engine starts with it (instrumentation.ts),
// so a video submitted there is generated, and a batch run, as on the lean path.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor } from '../support/accounts';
import { FAST_JOBS_ENV, VIDEO_MODEL, videoConfig } from '../support/video-config';
import { getDb } from '@/lib/db';

let up: FakeUpstream;
let gw: RunningGateway;
let dataDir: string;

beforeAll(async () => {
  up = await startFakeUpstream();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-jobs-next-'));
  gw = await startGateway({ config: videoConfig([up.url]), mode: 'next', env: { ...FAST_JOBS_ENV, DATA_DIR: dataDir } });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await up?.close();
  rmSync(dataDir, { recursive: true, force: true });
  await (await getDb()).$disconnect();
});

describe('jobs on next start', () => {
  it('generates a video and serves its file', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const auth = { authorization: `Bearer ${acct.apiKey}` };
    const res = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[ms=800] a kite', seconds: 2 }),
    });
    expect(res.status, gw.output().slice(-2000)).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await waitFor(async () => {
      const v = (await (await fetch(`${gw.url}/v1/videos/${id}`, { headers: auth })).json()) as { status: string };
      return v.status === 'completed';
    }, 30_000);
    const content = await fetch(`${gw.url}/v1/videos/${id}/content`, { headers: { ...auth, range: 'bytes=0-3' } });
    expect(content.status).toBe(206);
    expect((await content.arrayBuffer()).byteLength).toBe(4);
  }, 60_000);
});
