import { describe, it, expect } from 'vitest';
import { dayLabel, ruleProblem, translator } from '@/lib/i18n/translate';
import { zhPhrases } from '@/lib/i18n/zh-phrases';
import { emailProblem, passwordProblem } from '@/lib/password-rules';

describe('phrase translator', () => {
  it('gives English back unchanged and fills placeholders', () => {
    const t = translator('en');
    expect(t('Create key')).toBe('Create key');
    expect(t('Revoke “{name}”?', { name: 'ci' })).toBe('Revoke “ci”?');
    expect(t('Enter an amount from {min} to {max}.', { min: '$5.00', max: '$500.00' })).toBe('Enter an amount from $5.00 to $500.00.');
  });

  it('gives Chinese for zh-CN with the same placeholders', () => {
    const t = translator('zh-CN');
    expect(t('Create key')).toBe('创建密钥');
    expect(t('Revoke “{name}”?', { name: 'ci' })).toBe('吊销“ci”？');
  });

  it('keeps every placeholder of a phrase in its Chinese text', () => {
    const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [en, zh] of Object.entries(zhPhrases)) expect(names(zh), en).toEqual(names(en));
  });

  it('labels chart days in either language', () => {
    expect(dayLabel('2026-11-03', translator('en'))).toBe('Nov 3');
    expect(dayLabel('2026-11-03', translator('zh-CN'))).toBe('11月3日');
  });

  it('translates the sign-up rules the browser checks', () => {
    const t = translator('zh-CN');
    expect(ruleProblem(passwordProblem('short')!, t)).toMatch(/^密码至少需要 \d+ 个字符。$/);
    expect(ruleProblem(passwordProblem('password123')!, t)).toContain('常用');
    expect(ruleProblem(emailProblem('nope')!, t)).toBe('请输入有效的邮箱地址。');
    expect(ruleProblem(passwordProblem('short')!, translator('en'))).toBe(passwordProblem('short'));
  });
});
