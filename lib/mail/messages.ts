// The mail this gateway sends (issue 41 item 3; docs/decisions/050): organization invitations,
// password reset links and email verification links, each in plain text and simple HTML, in the
// recipient's language (the one they signed up in, User.locale) or, for someone without an account,
// the language of the request that caused it, else English. Every sender answers whether the mail
// was accepted by the SMTP server; without SMTP_URL that is false and nothing is sent.
import { getDb } from '@/lib/db';
import { normaliseEmail, emailProblem } from '@/lib/auth/password-rules';
import type { Locale } from '@/lib/i18n/messages';
import { mailConfigured, sendMail } from './transport';

type Texts = { subject: string; lines: string[]; action: string; after: string[] };

/** The stored language of the account of this email, else `fallback`. */
async function recipientLocale(email: string, fallback: Locale = 'en'): Promise<Locale> {
  if (emailProblem(email)) return fallback;
  const db = await getDb();
  const user = await db.user.findUnique({ where: { email: normaliseEmail(email) }, select: { locale: true } });
  return user?.locale === 'zh-CN' || user?.locale === 'en' ? user.locale : fallback;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Text and HTML of one mail: lines, the link as a button (and written out for clients that hide it), closing lines. */
function compose(to: string, link: string, t: Texts) {
  const text = [...t.lines, '', `${t.action}: ${link}`, '', ...t.after].join('\n');
  const p = (s: string) => `<p style="margin:0 0 12px">${escapeHtml(s)}</p>`;
  const href = escapeHtml(link);
  const html = [
    '<!doctype html><html><body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:15px;line-height:1.5;color:#0f172a;max-width:560px;margin:0 auto;padding:24px">',
    ...t.lines.map(p),
    `<p style="margin:20px 0"><a href="${href}" style="display:inline-block;background:#4f46e5;color:#ffffff;text-decoration:none;padding:10px 16px;border-radius:6px;font-weight:600">${escapeHtml(t.action)}</a></p>`,
    `<p style="margin:0 0 12px;font-size:13px;color:#475569;word-break:break-all">${href}</p>`,
    ...t.after.map(p),
    '</body></html>',
  ].join('\n');
  return { to, subject: t.subject, text, html };
}

const ROLE_ZH: Record<string, string> = { owner: '所有者', admin: '管理员', developer: '开发者', billing: '账务' };

/** An organization's invitation link; false when it was not mailed (the inviter is shown the link). */
export async function sendInvitationMail(to: string, msg: { org: string; inviter: string; link: string; role: string }): Promise<boolean> {
  if (!mailConfigured()) return false;
  const zh = (await recipientLocale(to)) === 'zh-CN';
  const t: Texts = zh
    ? {
        subject: `${msg.inviter} 邀请你加入 ${msg.org}`,
        lines: [`${msg.inviter} 邀请你以${ROLE_ZH[msg.role] ?? msg.role}身份加入 Model Gateway 上的组织「${msg.org}」。`],
        action: '接受邀请',
        after: ['请使用此邮箱地址登录或注册后接受。链接 7 天内有效，只能使用一次。', '如果你不认识邀请人，忽略此邮件即可。'],
      }
    : {
        subject: `${msg.inviter} invited you to ${msg.org}`,
        lines: [`${msg.inviter} invited you to join the organization "${msg.org}" on Model Gateway as ${msg.role}.`],
        action: 'Accept the invitation',
        after: ['Sign in or sign up with this email address to accept. The link works for 7 days, once.', 'If you do not know who sent it, ignore this mail.'],
      };
  return sendMail(compose(to, msg.link, t));
}

/** A password reset link (lib/auth/password-reset.ts). */
export async function sendPasswordResetMail(to: string, link: string, fallback: Locale): Promise<boolean> {
  if (!mailConfigured()) return false;
  const zh = (await recipientLocale(to, fallback)) === 'zh-CN';
  const t: Texts = zh
    ? {
        subject: '重置 Model Gateway 密码',
        lines: ['有人（希望是你）请求重置此邮箱对应的 Model Gateway 账户的密码。'],
        action: '设置新密码',
        after: ['链接 1 小时内有效，只能使用一次。设置新密码后，其他已登录的会话都会退出。', '如果不是你本人的请求，忽略此邮件即可，密码不会改变。'],
      }
    : {
        subject: 'Reset your Model Gateway password',
        lines: ['Someone (hopefully you) asked to reset the password of the Model Gateway account of this email address.'],
        action: 'Set a new password',
        after: [
          'The link works for 1 hour, once. Setting a new password signs out every other session.',
          'If you did not ask for this, ignore this mail: your password stays as it is.',
        ],
      };
  return sendMail(compose(to, link, t));
}

/** An email verification link (lib/auth/email-verification.ts). */
export async function sendVerificationMail(to: string, link: string, fallback: Locale): Promise<boolean> {
  if (!mailConfigured()) return false;
  const zh = (await recipientLocale(to, fallback)) === 'zh-CN';
  const t: Texts = zh
    ? {
        subject: '验证你的 Model Gateway 邮箱',
        lines: ['请打开下面的链接确认这是你的邮箱地址。验证之后才能兑换兑换码、充值或购买套餐。'],
        action: '验证邮箱',
        after: ['链接 3 天内有效。如果你没有注册 Model Gateway，忽略此邮件即可。'],
      }
    : {
        subject: 'Verify your Model Gateway email',
        lines: ['Open the link below to confirm this is your email address. Redeeming codes, recharging and buying plans wait for it.'],
        action: 'Verify my email',
        after: ['The link works for 3 days. If you did not sign up for Model Gateway, ignore this mail.'],
      };
  return sendMail(compose(to, link, t));
}
