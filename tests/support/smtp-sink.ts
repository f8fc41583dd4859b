// A local SMTP server (npm smtp-server) that keeps every mail it is given, for tests of what the
// gateway sends. Messages are decoded just enough to read them: headers, and the text/plain and
// text/html parts (quoted-printable or base64, as nodemailer writes them). Written here rather than
// with a MIME parser package because only nodemailer's own simple output has to be read.
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface SunkMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

export interface SmtpSink {
  url: string;
  mails: SunkMail[];
  /** The first mail to `to` (after `since` mails) whose subject matches, waiting up to `ms`. */
  waitFor(to: string, opts?: { subject?: RegExp; since?: number; ms?: number }): Promise<SunkMail>;
  close(): Promise<void>;
}

function decodeBody(body: string, encoding: string, charset = 'utf-8'): string {
  const enc = encoding.toLowerCase();
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString(charset as BufferEncoding);
  if (enc === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => `%${h}`);
    // Percent-decoding gives back the UTF-8 bytes QP encoded; a literal % is escaped first.
    return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
  }
  return body;
}

/** RFC 2047 encoded words; adjacent ones are one text (the space between them is not part of it). */
function decodeHeader(value: string): string {
  return value.replace(/(=\?[^?]+\?[bqBQ]\?[^?]*\?=\s*)+/g, (run) => {
    const bytes = [...run.matchAll(/=\?[^?]+\?([bqBQ])\?([^?]*)\?=/g)].map(([, enc, text]) =>
      enc!.toLowerCase() === 'b'
        ? Buffer.from(text!, 'base64')
        : Buffer.from(
            text!.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
            'latin1',
          ),
    );
    return Buffer.concat(bytes).toString('utf8') + /\s*$/.exec(run)![0];
  });
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return headers;
}

function parsePart(raw: string, out: { text: string; html: string }): Map<string, string> {
  const split = raw.search(/\r?\n\r?\n/);
  const headers = parseHeaders(split === -1 ? raw : raw.slice(0, split));
  const body = split === -1 ? '' : raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const parts = body.split(`--${boundary}`).slice(1);
    for (const part of parts) if (!part.startsWith('--')) parsePart(part.replace(/^\r?\n/, ''), out);
  } else {
    const decoded = decodeBody(body, headers.get('content-transfer-encoding') ?? '7bit');
    if (/^text\/html/i.test(type)) out.html += decoded;
    else if (/^text\/plain/i.test(type)) out.text += decoded;
  }
  return headers;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: SunkMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const out = { text: '', html: '' };
        const headers = parsePart(raw, out);
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          subject: decodeHeader(headers.get('subject') ?? ''),
          text: out.text,
          html: out.html,
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(to, opts = {}) {
      const deadline = Date.now() + (opts.ms ?? 15_000);
      for (;;) {
        const found = mails.slice(opts.since ?? 0).find((m) => m.to.includes(to.toLowerCase()) && (!opts.subject || opts.subject.test(m.subject)));
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no mail to ${to} within ${opts.ms ?? 15_000} ms (got ${mails.length}: ${mails.map((m) => m.subject).join(', ')})`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in a mail's text that starts with `prefix`. */
export function linkIn(mail: SunkMail, prefix: string): string {
  const i = mail.text.indexOf(prefix);
  if (i === -1) throw new Error(`no link starting ${prefix} in:\n${mail.text}`);
  return /^\S+/.exec(mail.text.slice(i))![0];
}
