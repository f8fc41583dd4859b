// The job engine on the embedded default (PGlite, no Redis): a video job and a batch run to the
// end, billed once each, on a server started with no DATABASE_URL.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../support/gateway';
import { startFakeUpstream } from '../support/fake-upstream';
import { FAST_JOBS_ENV, VIDEO_MODEL, videoConfig } from '../support/video-config';

const until = async <T>(fn: () => Promise<T | null>, ms: number): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('jobs on the embedded database', () => {
  it('runs a video and a batch to completion on PGlite, each charged once', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-jobs-embedded-'));
    const fake = await startFakeUpstream();
    const gw = await startGateway({
      // One job of an account at a time: the second video waits in the queue while the first runs.
      config: videoConfig([fake.url], { starting_balance_usd: '5', jobs: { account_concurrency: 1 } }),
      env: { ...FAST_JOBS_ENV, DATABASE_URL: '', REDIS_URL: '', DATA_DIR: dataDir },
    });
    try {
      const reg = await fetch(`${gw.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'jobs-embedded@example.com', password: 'sturdy-pass-42' }),
      });
      expect(reg.status).toBe(201);
      const cookie = reg.headers.get('set-cookie')!.split(';')[0];
      const keyRes = await fetch(`${gw.url}/api/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, origin: gw.url },
        body: '{"name":"jobs"}',
      });
      const { key } = (await keyRes.json()) as { key: string };
      const auth = { authorization: `Bearer ${key}` };

      const video = (await (
        await fetch(`${gw.url}/v1/videos`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[ms=1000] waves', seconds: 3 }),
        })
      ).json()) as { id: string };
      const second = (await (
        await fetch(`${gw.url}/v1/videos`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[ms=300] sand', seconds: 1 }),
        })
      ).json()) as { id: string };
      const status = async (id: string) => ((await (await fetch(`${gw.url}/v1/videos/${id}`, { headers: auth })).json()) as { status: string }).status;
      await until(async () => ((await status(video.id)) === 'in_progress' ? true : null), 30_000);
      expect(await status(second.id)).toBe('queued');
      expect(fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos')).toHaveLength(1);
      await until(async () => ((await status(video.id)) === 'completed' ? true : null), 30_000);
      await until(async () => ((await status(second.id)) === 'completed' ? true : null), 30_000);

      const form = new FormData();
      form.append('purpose', 'batch');
      const line = (i: number) =>
        JSON.stringify({
          custom_id: `c${i}`,
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        });
      form.append('file', new Blob([[0, 1, 2].map(line).join('\n')]), 'b.jsonl');
      const file = (await (await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
      const batch = (await (
        await fetch(`${gw.url}/v1/batches`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        })
      ).json()) as { id: string };
      const done = await until(async () => {
        const b = (await (await fetch(`${gw.url}/v1/batches/${batch.id}`, { headers: auth })).json()) as {
          status: string;
          request_counts: { completed: number };
        };
        return b.status === 'completed' ? b : null;
      }, 30_000);
      expect(done.request_counts.completed).toBe(3);

      // The dashboard's log: the video's charge (3 s at $0.10) and three batch lines, once each.
      const logs = await until(async () => {
        const l = (await (await fetch(`${gw.url}/api/logs`, { headers: { cookie } })).json()) as { data: { id: string; cost_usd: string }[] };
        return l.data.filter((r) => r.id === video.id || r.id.startsWith('batch_req_')).length >= 4 ? l : null;
      }, 15_000);
      expect(logs.data.filter((r) => r.id === video.id).map((r) => r.cost_usd)).toEqual(['0.3']);
      expect(logs.data.filter((r) => r.id === second.id).map((r) => r.cost_usd)).toEqual(['0.1']);
      expect(logs.data.filter((r) => r.id.startsWith('batch_req_'))).toHaveLength(3);
    } finally {
      await gw.stop();
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
