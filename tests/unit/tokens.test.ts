// The gateway's token counter (lib/gateway/tokens.ts) against hostile text: each input is counted
// within a CPU-time budget (generous, so that it holds beside other work: the quadratic merge took
// seconds to minutes on these), never holds the loop long, errs high past its exact budget, and
// stops when its client has gone.
import { beforeAll, describe, expect, it } from 'vitest';
import { CountAborted, countMessageTokens, countTextsTokens, countTokens, isSpace, MAX_EXACT_CHARS, promptTokenBound } from '@/lib/gateway/tokens';

const cpuMs = async (work: () => Promise<unknown>): Promise<number> => {
  const start = process.cpuUsage();
  await work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

beforeAll(async () => {
  await countTokens('load the encoder before any budget is measured');
});

describe('token counting', () => {
  it('splits runs on exactly the characters the pre-tokenizer takes as whitespace (\\s with the u flag)', () => {
    const space = /\s/u;
    const differ: string[] = [];
    for (let c = 0; c < 0x10000; c++) if (isSpace(c) !== space.test(String.fromCharCode(c))) differ.push(c.toString(16));
    expect(differ).toEqual([]);
    // The characters of issue 37, and the ones the old list also missed.
    for (const c of [0x202f, 0xfeff, 0x1680, 0x205f]) expect(isSpace(c)).toBe(true);
  });

  // 100,000 characters each: " \u202f" took 35 s before the fix.
  const hostile: Record<string, string> = {
    'space + U+202F': ' \u202f'.repeat(50_000),
    'space + U+FEFF': ' \ufeff'.repeat(50_000),
    'space + U+205F': ' \u205f'.repeat(50_000),
    'space + U+1680': ' \u1680'.repeat(50_000),
    'one long word': 'a'.repeat(100_000),
    'alternating letter and space': 'a '.repeat(50_000),
    'punctuation run': '!?'.repeat(50_000),
    'emoji wall': '\u{1F600}'.repeat(50_000),
  };

  it.each(Object.keys(hostile))('counts %s (100k characters) within a CPU-time budget', async (name) => {
    const text = hostile[name];
    let tokens = 0;
    const used = await cpuMs(async () => {
      tokens = await countTokens(text);
    });
    expect(tokens).toBeGreaterThan(0);
    expect(used).toBeLessThan(500);
  });

  it('yields to the event loop while it counts a long hostile text', async () => {
    const text = ' \u202f'.repeat(2_000_000).slice(0, 4 * 1024 * 1024);
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    await countTokens(text);
    clearInterval(timer);
    // A few milliseconds a slice; the bound leaves room for a loaded machine and the GC.
    expect(longest).toBeLessThan(250);
  });

  it('encodes at most MAX_EXACT_CHARS of one count; the rest is estimated high, at the reservation bound of its bytes', async () => {
    const prose = 'The quick brown fox jumps over the lazy dog, again and again. ';
    const text = prose.repeat(Math.ceil((3 * MAX_EXACT_CHARS) / prose.length));
    const head = text.slice(0, MAX_EXACT_CHARS);
    const exactHead = await countTokens(head);
    let counted = 0;
    const used = await cpuMs(async () => {
      counted = await countTokens(text);
    });
    const rest = Buffer.byteLength(text) - Buffer.byteLength(head);
    expect(counted).toBeGreaterThanOrEqual(exactHead + promptTokenBound(rest) - 1);
    // An over-estimate of the whole text, never under.
    expect(counted).toBeGreaterThan(3 * exactHead);
    expect(used).toBeLessThan(1000);
    // The budget is per count, across the messages of a conversation.
    const messages = [0, 1, 2].map(() => ({ role: 'user', content: head }));
    expect(await countMessageTokens(messages)).toBeGreaterThan(3 * exactHead);
    expect(await countTextsTokens([head, head, head])).toBeGreaterThan(3 * exactHead);
  });

  it('stops counting when its client has gone', async () => {
    const ac = new AbortController();
    const text = 'word '.repeat(200_000);
    const counting = countTokens(text, Infinity, ac.signal);
    ac.abort();
    await expect(counting).rejects.toBeInstanceOf(CountAborted);
  });
});
