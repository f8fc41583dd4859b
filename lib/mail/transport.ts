import nodemailer, { type Transporter } from 'nodemailer';
import { env } from '@/lib/env';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';

// Outgoing mail over SMTP (nodemailer) from SMTP_URL (docs/decisions/050). Without SMTP_URL nothing is
// sent and every sender answers false, so its caller shows the link instead (invitations) or says
// that mail is not set up (password reset). A failed send is logged and answered false: mail is never
// a reason for a request to fail.

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export function mailConfigured(): boolean {
  return Boolean(env.SMTP_URL);
}

/** The From: MAIL_FROM, else no-reply at PUBLIC_BASE_URL's host (or the SMTP user when it is an address). */
export function mailFrom(): string {
  if (env.MAIL_FROM) return env.MAIL_FROM;
  const smtpUser = env.SMTP_URL ? decodeURIComponent(new URL(env.SMTP_URL).username) : '';
  if (smtpUser.includes('@')) return `Model Gateway <${smtpUser}>`;
  const host = env.PUBLIC_BASE_URL ? new URL(env.PUBLIC_BASE_URL).hostname : 'localhost';
  return `Model Gateway <no-reply@${host}>`;
}

/** One transport per process, made on the first mail. */
function transport(): Transporter | null {
  if (!env.SMTP_URL) return null;
  // nodemailer reads smtp(s)://user:pass@host:port and its query options (?tls.rejectUnauthorized=false) itself.
  return singleton('mail-transport', () => nodemailer.createTransport(env.SMTP_URL!));
}

/** Sends one mail; true when the SMTP server accepted it. Never throws. */
export async function sendMail(mail: Mail): Promise<boolean> {
  const t = transport();
  if (!t) return false;
  try {
    const info = await t.sendMail({ from: mailFrom(), to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    log('info', 'mail sent', { subject: mail.subject, messageId: info.messageId });
    return true;
  } catch (err) {
    // The address is personal data: the log says what failed, not to whom.
    log('error', 'mail not sent', { subject: mail.subject, ...errorFields(err) });
    return false;
  }
}
