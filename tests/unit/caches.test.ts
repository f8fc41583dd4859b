// Issue 44 items 5-7, the pure parts: the response cache's key and header, its in-process store,
// the operator config of both caches, conversation naming for affinity, and the provider export reader.
import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError } from '@/lib/config';
import { cacheAsk, cacheKey, hitCost } from '@/lib/gateway/response-cache';
import { MemoryStore } from '@/lib/cache/kv';
import { conversationOf } from '@/lib/cache/affinity';
import { parseCsv, parseProviderExport } from '@/lib/admin/reconcile';
import { GatewayError } from '@/lib/errors';
import type { Principal } from '@/lib/auth/principal';
import type { GatewayRequest } from '@/lib/gateway/types';
import { testConfig } from '../support/gateway';

const cfg = (over: Record<string, unknown> = {}) => buildConfig(testConfig({ openaiUrls: ['http://127.0.0.1:1'], overrides: over }), 'test.yaml');
const principal = (ttl: number | null = null) => ({ userId: 'u1', responseCacheTtl: ttl }) as Principal;
const request = (headers: Record<string, string>) => ({ headers }) as unknown as GatewayRequest;

describe('response cache config', () => {
  it('defaults: on, billed at 0, a day at most, 1 MiB a reply', () => {
    const c = cfg();
    expect(c.responseCache).toMatchObject({ enabled: true, billedNano: 0n, maxTtlSeconds: 86_400, maxEntryBytes: 1024 * 1024 });
    expect(c.cacheAffinity).toEqual({ enabled: true, ttlSeconds: 600 });
  });

  it('a fraction over 1 or an unknown field is refused, naming the field', () => {
    expect(() => cfg({ response_cache: { billed_fraction: '1.5' } })).toThrow(/response_cache\.billed_fraction: must be between 0 and 1/);
    expect(() => cfg({ response_cache: { ttl: 5 } })).toThrow(ConfigError);
    expect(cfg({ response_cache: { billed_fraction: '0.25' } }).responseCache.billedNano).toBe(250_000_000n);
  });
});

describe('cacheAsk', () => {
  const c = cfg({ response_cache: { max_ttl_seconds: 100 } });
  it('reads ttl=<seconds>, capped at the operator maximum; the key TTL when the request says nothing', () => {
    expect(cacheAsk(request({ 'x-service-cache': 'ttl=30' }), c, principal())).toEqual({ ttlMs: 30_000 });
    expect(cacheAsk(request({ 'x-service-cache': 'TTL = 1000' }), c, principal())).toEqual({ ttlMs: 100_000 });
    expect(cacheAsk(request({}), c, principal())).toBeNull();
    expect(cacheAsk(request({}), c, principal(60))).toEqual({ ttlMs: 60_000 });
  });

  it('no-store and off bypass it, also for an opted-in key; a malformed value is a 400 naming the header', () => {
    expect(cacheAsk(request({ 'cache-control': 'private, no-store', 'x-service-cache': 'ttl=30' }), c, principal())).toBeNull();
    expect(cacheAsk(request({ 'x-service-cache': 'off' }), c, principal(60))).toBeNull();
    for (const bad of ['ttl=0', 'ttl=-1', 'ttl=1.5', 'forever', 'ttl=']) {
      let err: unknown;
      try {
        cacheAsk(request({ 'x-service-cache': bad }), c, principal());
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).param).toBe('x-service-cache');
      expect((err as GatewayError).status).toBe(400);
    }
  });

  it('is off when the operator switched it off', () => {
    expect(cacheAsk(request({ 'x-service-cache': 'ttl=30' }), cfg({ response_cache: { enabled: false } }), principal())).toBeNull();
  });
});

describe('cacheKey', () => {
  const model = cfg().models.get('gpt-4o-mini')!;
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, tools: [{ type: 'function', function: { name: 'f' } }] };
  const key = (b: Record<string, unknown>, user = 'u1', stream = false) => cacheKey(user, '/v1/chat/completions', model, stream, b);
  it('ignores key order and identifiers, not the content, the sampling or the tools', () => {
    expect(key({ temperature: 0.2, tools: body.tools, messages: body.messages, model: 'gpt-4o-mini', user: 'x', metadata: { a: 1 } })).toBe(key(body));
    expect(key({ ...body, temperature: 0.3 })).not.toBe(key(body));
    expect(key({ ...body, tools: [] })).not.toBe(key(body));
    expect(key({ ...body, messages: [{ role: 'user', content: 'hi!' }] })).not.toBe(key(body));
  });
  it('differs per account and between a stream and a whole reply', () => {
    expect(key(body, 'u2')).not.toBe(key(body));
    expect(key(body, 'u1', true)).not.toBe(key(body));
  });
  it('bills a hit at the fraction, exactly', () => {
    expect(hitCost(1_000_001n, 500_000_000n)).toBe(500_000n);
    expect(hitCost(123n, 0n)).toBe(0n);
    expect(hitCost(123n, 1_000_000_000n)).toBe(123n);
  });
});

describe('MemoryStore', () => {
  it('expires entries and drops the least recently used past its bound', async () => {
    const store = new MemoryStore(() => 200);
    await store.set('a', 'x'.repeat(40), 60_000); // 1 + 80 bytes
    await store.set('b', 'y'.repeat(40), 60_000);
    expect(await store.get('a')).not.toBeNull(); // a is now the most recent
    await store.set('c', 'z'.repeat(40), 60_000);
    expect(await store.get('b')).toBeNull();
    expect(await store.get('a')).not.toBeNull();
    await store.set('d', 'w', -1);
    expect(await store.get('d')).toBeNull();
    await store.set('huge', 'h'.repeat(500), 60_000);
    expect(await store.get('huge')).toBeNull();
    expect(await store.get('a')).not.toBeNull();
  });
});

describe('conversationOf', () => {
  it('names a conversation by header, prompt_cache_key, metadata.user_id, then its leading messages', () => {
    expect(conversationOf({ 'x-session-affinity': 's1' }, { prompt_cache_key: 'p' })).toBe('h:s1');
    expect(conversationOf({}, { prompt_cache_key: 'p', metadata: { user_id: 'u' } })).toBe('p:p');
    expect(conversationOf({}, { metadata: { user_id: 'u' } })).toBe('u:u');
    const turn1 = { system: 'sys', messages: [{ role: 'user', content: 'first' }] };
    const turn2 = { system: 'sys', messages: [...turn1.messages, { role: 'assistant', content: 'a' }, { role: 'user', content: 'second' }] };
    expect(conversationOf({}, turn2)).toBe(conversationOf({}, turn1));
    expect(conversationOf({}, { ...turn1, system: 'other' })).not.toBe(conversationOf({}, turn1));
    expect(conversationOf({}, { input: 'a string' })).toBeUndefined();
  });
});

describe('provider exports', () => {
  it('parses quoted CSV fields, CRLF and a BOM', () => {
    expect(parseCsv('\ufeffa,"b,c","d ""e"""\r\n1,2,3\n\n')).toEqual([
      ['a', 'b,c', 'd "e"'],
      ['1', '2', '3'],
    ]);
  });

  it('OpenAI: cached tokens are taken out of input_tokens; rows of one day and model are summed', () => {
    const csv = 'start_time,model,input_tokens,input_cached_tokens,output_tokens,batch\n1764288000,gpt-4o,100,40,7,False\n1764290000,gpt-4o,10,0,1,True\n';
    expect(parseProviderExport(csv)).toEqual({
      format: 'openai',
      rows: [{ day: '2025-11-28', model: 'gpt-4o', uncachedInput: 70, cacheRead: 40, cacheWrite: 0, output: 8 }],
    });
  });

  it('Anthropic: the console export names too, 5-minute and 1-hour writes together', () => {
    const csv =
      'usage_date_utc,model_version,usage_input_tokens_no_cache,usage_input_tokens_cache_write_5m,usage_input_tokens_cache_write_1h,usage_input_tokens_cache_read,usage_output_tokens\n' +
      '2026-11-20,claude-sonnet-4-5,5,10,20,30,40\n';
    expect(parseProviderExport(csv).rows).toEqual([
      { day: '2026-11-20', model: 'claude-sonnet-4-5', uncachedInput: 5, cacheRead: 30, cacheWrite: 30, output: 40 },
    ]);
  });

  it('names what it cannot read', () => {
    expect(() => parseProviderExport('start_time,model,input_tokens\n1764288000,m,1\n')).toThrow('The export has no output_tokens column.');
    expect(() => parseProviderExport('start_time,model,input_tokens,output_tokens\nyesterday,m,1,1\n')).toThrow(
      'Line 2: the day is not a date or a unix time.',
    );
  });
});
