import { describe, it, expect } from 'vitest';
import { emailProblem, normaliseEmail, passwordProblem } from '@/lib/password-rules';
import { sessionIsCurrent } from '@/lib/auth/session-epoch';

describe('sign-up rule (shared by the form and the server)', () => {
  it('asks for length, not composition', () => {
    expect(passwordProblem('short')).toMatch(/at least 8/);
    expect(passwordProblem('x'.repeat(201))).toMatch(/at most 200/);
    expect(passwordProblem('onlyletters')).toBeNull();
    expect(passwordProblem('correct horse battery staple')).toBeNull();
    expect(passwordProblem('12345678901234')).toBeNull();
  });

  it('refuses the most common passwords whatever their case, and one character repeated', () => {
    for (const p of ['password', 'Password1', 'QWERTYUIOP', '12345678', 'iloveyou', 'aaaaaaaaaaaa', '0000000000']) {
      expect(passwordProblem(p), p).toMatch(/commonly used/);
    }
  });

  it('checks an email address the way the server does', () => {
    expect(emailProblem('dev@example.com')).toBeNull();
    expect(emailProblem('  Dev@Example.COM ')).toBeNull();
    for (const e of ['not-an-email', 'a@b', 'a b@example.com', '@example.com', 'a@.c', 'a@x..test', 'a\u0000@x.test', 'a@x.te\u0000st']) {
      expect(emailProblem(e), e).not.toBeNull();
    }
  });

  it('one mailbox has one form: case, spaces and the root dot of the domain do not make another account (#37 item 22)', () => {
    for (const e of ['alice@x.test', ' Alice@X.Test ', 'alice@x.test.', 'ALICE@X.TEST..', 'alice@x.test.\n'])
      expect(normaliseEmail(e), JSON.stringify(e)).toBe('alice@x.test');
    expect(emailProblem('alice@x.test.')).toBeNull();
    // Only the domain's trailing dots go: the local part is the mailbox's own business.
    expect(normaliseEmail('a.@x.test')).toBe('a.@x.test');
  });
});

describe('session epoch', () => {
  it('keeps every session while the account has ended none', () => {
    expect(sessionIsCurrent(undefined, null)).toBe(true);
    expect(sessionIsCurrent(1, null)).toBe(true);
  });

  it('refuses sessions signed in before the cut-off, and tokens that do not say when', () => {
    const cut = new Date('2026-11-26T04:00:00.000Z');
    expect(sessionIsCurrent(cut.getTime() - 1, cut)).toBe(false);
    expect(sessionIsCurrent(cut.getTime(), cut)).toBe(true);
    expect(sessionIsCurrent(undefined, cut)).toBe(false);
    expect(sessionIsCurrent('2026-11-27', cut)).toBe(false);
  });
});

describe('interface language', () => {
  it('reads Chinese in any form as zh-CN and anything else as English', async () => {
    const { localeFromAcceptLanguage } = await import('@/lib/i18n/messages');
    expect(localeFromAcceptLanguage('zh-CN,zh;q=0.9,en;q=0.8')).toBe('zh-CN');
    expect(localeFromAcceptLanguage('zh-TW')).toBe('zh-CN');
    expect(localeFromAcceptLanguage('en-US,en;q=0.9,zh;q=0.8')).toBe('en');
    expect(localeFromAcceptLanguage('fr-FR,zh;q=0.5')).toBe('zh-CN');
    expect(localeFromAcceptLanguage('de-DE')).toBe('en');
    expect(localeFromAcceptLanguage(null)).toBe('en');
  });
});
