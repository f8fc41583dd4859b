// The server's coded messages (lib/i18n/codes.ts): every code speaks English and Chinese with the
// same parameters, parameters are filled in, and the dashboard API carries code and params beside
// the English message it always had.
import { describe, expect, it } from 'vitest';
import { apiErrorText, apiFieldErrors, attemptReason, englishMessage, messageCodes, messageTemplates, renderMessage } from '@/lib/i18n/codes';
import { apiErrorBody, codedError, GatewayError } from '@/lib/errors';
import { parseKeyControls } from '@/lib/keys/controls';
import { decodeCursor, parseLimit, parseLogFilters } from '@/lib/dashboard/filters';
import { parseUsageQuery } from '@/lib/dashboard/usage';
import { zhPhrases } from '@/lib/i18n/zh-phrases';
import { zhConsole } from '@/lib/i18n/zh-console';
import { translator } from '@/lib/i18n/translate';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('message codes', () => {
  it('has an English and a Chinese text for every code, naming the same parameters', () => {
    expect(messageCodes.length).toBeGreaterThan(40);
    for (const code of messageCodes) {
      const { en, zh } = messageTemplates[code];
      expect(en.trim(), code).not.toBe('');
      expect(zh, `${code} has Chinese`).toMatch(/[\u4e00-\u9fff]/);
      // A Chinese text may leave out an English-only detail (the limiter's English label), never add one.
      for (const name of placeholders(zh)) expect(placeholders(en), `${code}: {${name}}`).toContain(name);
    }
  });

  it('fills the parameters in both languages', () => {
    const m = { message_code: 'redeem.expired', params: { date: '2026-11-01' } };
    expect(renderMessage('en', m)).toBe('This code expired on 2026-11-01.');
    expect(renderMessage('zh-CN', m)).toBe('此兑换码已于 2026-11-01 过期。');
    expect(renderMessage('zh-CN', { message_code: 'auth.throttled_address', params: { seconds: 42 } })).toBe('此地址登录失败次数过多，请 42 秒后重试。');
    expect(englishMessage('key.too_many', { live: 3, cap: 3 })).toBe(
      'This account already has 3 API keys, the most it may hold (3). Revoke keys it no longer uses first.',
    );
  });

  it('falls back to the English message for a code it does not know, and to a Chinese sentence when there is none', () => {
    expect(renderMessage('zh-CN', { message_code: 'not.a.code', message: 'Something new.' })).toBe('Something new.');
    expect(apiErrorText('zh-CN', { error: { code: 'conflict', message: 'Uncoded English.' } }, 409)).toBe('与当前状态冲突，请刷新页面后重试。');
    expect(apiErrorText('en', { error: { code: 'conflict', message: 'Uncoded English.' } }, 409)).toBe('Uncoded English.');
  });

  it('reads recorded attempt reasons back into codes', () => {
    expect(renderMessage('zh-CN', attemptReason('upstream answered 502'))).toBe('上游返回 502');
    expect(renderMessage('zh-CN', attemptReason('upstream timed out (UND_ERR_HEADERS_TIMEOUT)'))).toBe('上游超时（UND_ERR_HEADERS_TIMEOUT）');
    expect(renderMessage('en', attemptReason('Invalid model foo'))).toBe('Invalid model foo');
  });
});

describe('the dashboard API envelope', () => {
  it('codes the log and usage filters’ refusals, so the pages render them in Chinese', () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return apiErrorBody(e as GatewayError).error as { message: string; message_code?: string; params?: Record<string, string | number> };
      }
      throw new Error('not refused');
    };
    const cases: [() => unknown, string, string][] = [
      [() => parseLogFilters(new URLSearchParams('status=weird!')), 'filter.status', '状态须为'],
      [() => parseLogFilters(new URLSearchParams('from=2026-02-30')), 'filter.bound', 'from 须为'],
      [() => parseLogFilters(new URLSearchParams('from=2026-03-02&to=2026-03-01')), 'filter.from_before_to', '开始时间'],
      [() => parseLogFilters(new URLSearchParams('from=2026-03-01&tz=Nowhere/City')), 'filter.tz', 'IANA 时区'],
      [() => decodeCursor('zzz'), 'filter.cursor', '分页游标'],
      [() => parseLimit('0', 50, 200), 'filter.limit', '1 到 200'],
      [() => parseUsageQuery(new URLSearchParams('group_by=planet')), 'usage.group_by', 'group_by 须为'],
    ];
    for (const [f, code, zh] of cases) {
      const err = refusal(f);
      expect(err.message_code, code).toBe(code);
      expect(renderMessage('zh-CN', err), code).toContain(zh);
      expect(renderMessage('en', err), code).toBe(err.message);
    }
  });

  it('keeps code and message and adds message_code and params', () => {
    const body = apiErrorBody(codedError('not_found', 'redeem.invalid', undefined, { param: 'code' }));
    expect(body).toEqual({ error: { code: 'not_found', message: 'This code is not valid.', param: 'code', message_code: 'redeem.invalid', params: {} } });
    expect(apiErrorBody(new GatewayError('forbidden', 'Plain.'))).toEqual({ error: { code: 'forbidden', message: 'Plain.' } });
  });

  it('names every bad field of the key form, in words, in both languages', () => {
    let err: unknown;
    try {
      parseKeyControls({ rpm: 'lots', tpm: 0, budget_usd: '-3', concurrency: 5 }, () => true);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    const body = apiErrorBody(err as GatewayError);
    // API clients still read the first field's terse message and `param`.
    expect(body.error.message).toBe('"budget_usd": must be a positive amount in USD with at most 12 decimals, e.g. 25 or "12.50".');
    expect(body.error.param).toBe('budget_usd');
    expect(body.error.fields?.map((f) => f.field)).toEqual(['budget_usd', 'rpm', 'tpm']);
    const zh = apiFieldErrors('zh-CN', body);
    expect(zh.rpm).toBe('请输入 1 到 1,000,000 之间的每分钟请求数（整数），或留空。');
    expect(zh.budget_usd).toMatch(/^请输入美元金额/);
    expect(zh.tpm).toBe('请输入 1 到 1,000,000,000 之间的每分钟 token 数（输入 + 输出，整数），或留空。');
    expect(apiFieldErrors('en', body).tpm).toBe('Enter a whole number of tokens per minute (input + output) from 1 to 1,000,000,000, or leave it empty.');
    expect(apiFieldErrors('en', body).rpm).toBe('Enter a whole number of requests per minute from 1 to 1,000,000, or leave it empty.');
  });
});

describe('the operator console phrases', () => {
  it('do not redefine a dashboard phrase, and are used through the same translator', () => {
    expect(Object.keys(zhConsole).filter((k) => k in zhPhrases)).toEqual([]);
    expect(translator('zh-CN')('Operator console')).toBe('运营控制台');
    expect(translator('en')('Operator console')).toBe('Operator console');
  });
});
