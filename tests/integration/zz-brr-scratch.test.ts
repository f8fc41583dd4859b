import { it, expect } from 'vitest';
import { startGateway, testConfig } from '/work/main/tests/support/gateway';
import { startFakeUpstream } from '/work/main/tests/support/fake-upstream';
import { createAccount } from '/work/main/tests/support/accounts';
import { getDb } from '@/lib/db';
it('abort', async () => {
  const slow = await startFakeUpstream({ chunkDelayMs: 200 });
  slow.setReply('one two three four five six seven eight nine ten eleven twelve');
  const g = await startGateway({ config: testConfig({ openaiUrls: [slow.url] }), env: { LOG_LEVEL: 'debug' } });
  const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
  const t0 = Date.now();
  const c = new AbortController();
  const res = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true }), signal: c.signal });
  const id = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  await reader.read(); await reader.read();
  console.log('abort at', Date.now() - t0);
  c.abort();
  const db = await getDb();
  for (let i = 0; i < 200; i++) { const r = await db.requestLog.findUnique({ where: { id } }); if (r) { console.log('row at', Date.now() - t0, r); break; } await new Promise((r) => setTimeout(r, 100)); }
  console.log(g.output());
  await g.stop('SIGKILL'); await slow.close();
}, 60000);
