import { describe, it, expect } from 'vitest';
import { clientIpFrom } from '@/lib/keys/client-ip';
import { trustProxySchema } from '@/lib/env';

describe('TRUST_PROXY', () => {
  const parse = (v: string) => trustProxySchema.safeParse(v);
  it('reads off, a number of trusted hops (1 and true: one proxy, as before) or trusted proxy ranges', () => {
    expect(parse('0').data).toBeNull();
    expect(parse('false').data).toBeNull();
    expect(parse('1').data).toEqual({ hops: 1 });
    expect(parse('true').data).toEqual({ hops: 1 });
    expect(parse('2').data).toEqual({ hops: 2 });
    expect(parse('10.0.0.0/8, 192.0.2.7,2001:db8::/32').data).toEqual({ ranges: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'] });
  });
  it('refuses anything else', () => {
    for (const bad of ['yes', '17', '10.0.0.0/33', '10.0.0.0/8,nginx', '1.2.3', '::1/129', ',']) expect(parse(bad).success, bad).toBe(false);
  });
});

describe('client address', () => {
  const client = '203.0.113.9';
  const proxy = '10.0.0.5';
  // What nginx ($proxy_add_x_forwarded_for) or an ALB sends on: the client's own header, then what it saw.
  const spoofed = `198.51.100.1, ${client}`;

  it('without TRUST_PROXY is the connection, whatever the header says', () => {
    expect(clientIpFrom(proxy, spoofed, null)).toBe(proxy);
    expect(clientIpFrom('::ffff:127.0.0.1', '198.51.100.1', null)).toBe('::ffff:127.0.0.1');
  });

  it('with one trusted hop is the entry the proxy appended, not the one the client wrote', () => {
    expect(clientIpFrom(proxy, spoofed, { hops: 1 })).toBe(client);
    expect(clientIpFrom(proxy, client, { hops: 1 })).toBe(client);
    // Several header lines are one list.
    expect(clientIpFrom(proxy, ['198.51.100.1', client], { hops: 1 })).toBe(client);
    expect(clientIpFrom(proxy, undefined, { hops: 1 })).toBe(proxy);
    expect(clientIpFrom(proxy, ' , ', { hops: 1 })).toBe(proxy);
  });

  it('with n trusted hops is the n-th entry from the right', () => {
    // client -> CDN (appends client) -> nginx (appends the CDN's address) -> us
    expect(clientIpFrom(proxy, `198.51.100.1, ${client}, 10.9.9.9`, { hops: 2 })).toBe(client);
    // Fewer entries than hops: the leftmost, the first a trusted proxy wrote.
    expect(clientIpFrom(proxy, client, { hops: 3 })).toBe(client);
  });

  it('with trusted ranges is the first address from the right that is not a trusted proxy', () => {
    const trust = { ranges: ['10.0.0.0/8', '192.0.2.0/24'] };
    expect(clientIpFrom(proxy, `198.51.100.1, ${client}, 192.0.2.4`, trust)).toBe(client);
    expect(clientIpFrom(`::ffff:${proxy}`, spoofed, trust)).toBe(client);
    // A connection from outside the trusted ranges: its header is the client's own.
    expect(clientIpFrom(client, '10.1.1.1', trust)).toBe(client);
    // Only trusted addresses: the request started inside them.
    expect(clientIpFrom(proxy, '10.1.1.1, 10.2.2.2', trust)).toBe('10.1.1.1');
    // Route handlers (no socket) walk the header alone.
    expect(clientIpFrom(undefined, `198.51.100.1, ${client}, 10.3.3.3`, trust)).toBe(client);
    // Garbage is an address no range matches: taken as the client's (and capped).
    expect(clientIpFrom(proxy, `1.1.1.1, ${'x'.repeat(100)}`, trust)).toBe('x'.repeat(64));
  });
});
