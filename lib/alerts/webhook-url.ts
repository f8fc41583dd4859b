import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import net from 'node:net';
import { env } from '@/lib/env';
import { fieldError, GatewayError } from '@/lib/errors';

// Webhook URLs are set by users and fetched by the server: they must not reach the operator's own
// network (metadata services, databases, admin ports) unless ALERT_WEBHOOK_ALLOW_PRIVATE says so.
// Checked when the URL is saved (literal addresses) and on every connection (the addresses a name
// resolves to at that moment, so a name re-pointed after saving is caught too).

const blocked = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  blocked.addSubnet(address, prefix, 'ipv6');

/** Whether an address is private, loopback, link-local, multicast or otherwise not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return blocked.check(mapped, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** Validates a webhook URL as given in the settings (400 naming `webhook_url`). */
export function parseWebhookUrl(value: unknown): string | null {
  if (value === null || value === '') return null;
  const bad = (why: string) =>
    new GatewayError('invalid_request', `"webhook_url": ${why}`, {
      param: 'webhook_url',
      messageCode: 'field.webhook_url',
      fields: [fieldError('webhook_url', 'field.webhook_url')],
    });
  if (typeof value !== 'string' || value.length > 2048) throw bad('must be an http(s) URL of at most 2048 characters.');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad('not a valid URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('must use https (or http).');
  if (url.username || url.password) throw bad('must not carry credentials.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!env.ALERT_WEBHOOK_ALLOW_PRIVATE && ((net.isIP(host) && isPrivateAddress(host)) || host === 'localhost' || host.endsWith('.localhost'))) {
    throw bad('private, loopback and link-local addresses are not allowed.');
  }
  return url.toString();
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for the webhook connections that refuses names resolving to private addresses. */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true } as LookupAllOptions, (err, addresses) => {
    if (err) return callback(err, []);
    if (!env.ALERT_WEBHOOK_ALLOW_PRIVATE) {
      const refused = addresses.find((a) => isPrivateAddress(a.address));
      if (refused) {
        const e: NodeJS.ErrnoException = new Error(`webhook host ${hostname} resolves to a private address (${refused.address})`);
        e.code = 'EPRIVATEADDRESS';
        return callback(e, []);
      }
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}

/** Literal-address hosts never go through `lookup`: they are checked here before connecting. */
export function assertDeliverableHost(url: URL): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!env.ALERT_WEBHOOK_ALLOW_PRIVATE && net.isIP(host) && isPrivateAddress(host)) {
    throw new Error(`webhook address ${host} is private`);
  }
}
