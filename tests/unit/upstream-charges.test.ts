// What the gateway keeps from an upstream's reply and charges for it, as pure functions: the
// channel's credentials redacted from upstream texts, built-in tool calls priced and capped, the
// failure streaks an automatic disable counts, the embeddings reply bound.
import { describe, expect, it } from 'vitest';
import type { ChannelInfo, GatewayConfig } from '@/lib/config';
import { redactUpstreamText } from '@/lib/gateway/upstream';
import { providers } from '@/lib/gateway/providers';
import { builtInToolsOf, toolReservation, unpricedTool } from '@/lib/gateway/builtin-tools';
import { perCallPrice, toolFee } from '@/lib/pricing/tools';
import { usdToPico } from '@/lib/money';
import { breakerSnapshot, recordChannelResult } from '@/lib/channels/breaker';
import { embeddingsReplyBound } from '@/lib/gateway/surfaces/embeddings';
import { responsesToolCalls } from '@/lib/gateway/translate/responses-native';
import { anthropicToolCalls } from '@/lib/gateway/translate/anthropic-anthropic';
import { modelInfo } from '../support/model-info';

describe('redactUpstreamText', () => {
  it('takes a base URL whose credentials are not valid %-encoding as typed, never throwing', () => {
    const odd = { name: 'odd', apiKey: 'sk-odd-0123456789', baseUrl: 'https://user%zz:pass%zz@up.example/v1' } as ChannelInfo;
    expect(redactUpstreamText('echo user%zz pass%zz sk-odd-0123456789', odd)).toBe('echo [redacted] [redacted] [redacted]');
  });

  const channel = { name: 'c', apiKey: 'sk-live-abcdef123456', baseUrl: 'https://proxyuser:proxy%40pass@up.example/v1' } as ChannelInfo;

  it('removes the channel key, the base URL credentials and any credential header or key parameter, keeping JSON valid', () => {
    const echoed = JSON.stringify({
      error: {
        message: `headers: ${JSON.stringify({ authorization: 'Bearer sk-live-abcdef123456', 'x-api-key': 'other-key', 'x-goog-api-key': 'AIzaSyXYZ' })} url https://up.example/v1?key=AIzaQQQ&alt=sse by proxyuser / proxy@pass`,
      },
    });
    const out = redactUpstreamText(echoed, channel);
    expect(() => JSON.parse(out)).not.toThrow();
    for (const secret of ['sk-live-abcdef123456', 'other-key', 'AIzaSyXYZ', 'AIzaQQQ', 'proxyuser', 'proxy@pass']) expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
    expect(redactUpstreamText('Authorization: Basic dXNlcjpwYXNz\nok', channel)).toBe('Authorization: [redacted]\nok');
    expect(redactUpstreamText('{"error":{"message":"max_tokens is too large"}}', channel)).toBe('{"error":{"message":"max_tokens is too large"}}');
  });
});

describe('built-in tool fees', () => {
  const tenDollars = perCallPrice(usdToPico('10'));
  const model = modelInfo({ toolPrices: { web_search: tenDollars } });

  it('$10 per thousand calls is exactly $0.01 a call', () => {
    expect(tenDollars).toBe(usdToPico('0.01'));
    expect(perCallPrice(usdToPico('0.000000001'))).toBe(1n);
  });

  it('finds Responses and Anthropic server tools, with their call limits; function tools are not billed', () => {
    const anthropic = builtInToolsOf(
      { tools: [{ type: 'custom', name: 'f' }, { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }, { type: 'web_fetch_20250910' }] },
      (i) => `tools.${i}.type`,
      'max_uses',
    );
    expect(anthropic).toEqual([
      { tool: 'web_search', type: 'web_search_20250305', param: 'tools.1.type', calls: 3 },
      { tool: 'web_fetch', type: 'web_fetch_20250910', param: 'tools.2.type', calls: 10 },
    ]);
    const responses = builtInToolsOf(
      { tools: [{ type: 'function', name: 'f' }, { type: 'web_search_preview' }, { type: 'code_interpreter' }] },
      (i) => `tools[${i}].type`,
      undefined,
      2,
    );
    expect(responses.map((t) => [t.tool, t.calls])).toEqual([
      ['web_search', 2],
      ['code_interpreter', 1],
    ]);
    expect(unpricedTool(model, responses)).toMatchObject({ status: 400, param: 'tools[2].type', message: expect.stringContaining('code_interpreter') });
    expect(unpricedTool(model, anthropic.slice(0, 1))).toBeUndefined();
    expect(toolReservation(model, anthropic.slice(0, 1))).toBe(3n * tenDollars);
  });

  it('bills the calls reported, each tool at most the calls reserved', () => {
    expect(toolFee(model.toolPrices, { web_search: 5, code_interpreter: 1 }, { web_search: 3 })).toEqual({ cost: 3n * tenDollars, billed: { web_search: 3 } });
  });

  it('counts calls from the replies: Responses output items (code interpreter per container), Anthropic usage and blocks', () => {
    expect(
      responsesToolCalls([
        { type: 'web_search_call' },
        { type: 'web_search_call' },
        { type: 'file_search_call' },
        { type: 'code_interpreter_call', container_id: 'a' },
        { type: 'code_interpreter_call', container_id: 'a' },
        { type: 'function_call' },
        { type: 'message' },
      ]),
    ).toEqual({ web_search: 2, file_search: 1, code_interpreter: 1 });
    expect(anthropicToolCalls({ server_tool_use: { web_search_requests: 4, web_fetch_requests: 1 } }, { web_search: 2, code_execution: 1 })).toEqual({
      web_search: 4,
      web_fetch: 1,
      code_execution: 1,
    });
    expect(anthropicToolCalls({ server_tool_use: { web_search_requests: -3 } }, {})).toEqual({});
  });
});

describe('failure streaks toward an automatic disable', () => {
  const cfg = { circuitBreaker: { failures: 3, cooldownMs: 1000, autoDisableAfter: 20, autoDisableMinAccounts: 2, probeIntervalMs: 500 } } as GatewayConfig;

  it('count each account at most auto_disable_after / auto_disable_min_accounts; the breaker counts every failure', () => {
    for (let i = 0; i < 50; i++) recordChannelResult('unit-streak', false, cfg, 'noisy');
    expect(breakerSnapshot()['unit-streak']).toMatchObject({ failures: 50, counted: 10, accounts: 1 });
    for (let i = 0; i < 10; i++) recordChannelResult('unit-streak', false, cfg, 'second');
    expect(breakerSnapshot()['unit-streak']).toMatchObject({ failures: 60, counted: 20, accounts: 2 });
    recordChannelResult('unit-streak', true, cfg);
    expect(breakerSnapshot()['unit-streak']).toBeUndefined();
  });
});

describe('embeddings replies', () => {
  it('are read up to what a valid reply of the request can be, at most 64 MiB', () => {
    const small = modelInfo({ kind: 'embedding', dimensions: 1536 });
    expect(embeddingsReplyBound(1, small)).toBe(64 * 1024 + 1024 + 1536 * 48);
    // The largest valid float reply (100 inputs of 3,072 dimensions, ~24 bytes a number) fits.
    expect(embeddingsReplyBound(100, modelInfo({ kind: 'embedding', dimensions: 3072 }))).toBeGreaterThan(100 * 3072 * 24);
    expect(embeddingsReplyBound(100, modelInfo({ kind: 'embedding', dimensions: 100_000 }))).toBe(64 * 1024 * 1024);
  });
});

describe('account-level upstream refusals are the channel’s failure', () => {
  it('out of credit, quota or billing: each provider says so in its own words; a plain rate limit or a caller’s 400 is not one', () => {
    const credit = '{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}';
    expect(providers.anthropic.keyRefused!(400, credit)).toBe(true);
    expect(providers.anthropic.keyRefused!(400, '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}')).toBe(false);
    const quota = '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}';
    expect(providers.openai.keyRefused!(429, quota)).toBe(true);
    expect(providers.openai.keyRefused!(429, '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}')).toBe(false);
    expect(providers.openai.keyRefused!(402, '{"error":{"message":"Insufficient Balance"}}')).toBe(true);
    const billing =
      '{"error":{"code":400,"message":"Gemini API free tier is not available in your country. Please enable billing on your project.","status":"FAILED_PRECONDITION"}}';
    expect(providers.gemini.keyRefused!(400, billing)).toBe(true);
    expect(providers.gemini.keyRefused!(429, '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}')).toBe(false);
  });
});
