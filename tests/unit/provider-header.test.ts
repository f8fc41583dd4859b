// X-Service-Provider carries the channel's public label (#40 item 5); a header holds only visible
// ASCII, so a label in another script is percent-encoded rather than breaking the reply.
import { describe, expect, it } from 'vitest';
import { providerHeader } from '@/lib/channels/labels';
import type { GatewayConfig } from '@/lib/config';

const cfg = {
  channels: [
    { name: 'openai-main', protocol: 'openai', label: 'Acme Cloud' },
    { name: 'cn-1', protocol: 'openai', label: '阿里云' },
    { name: 'claude-x', protocol: 'anthropic' },
  ],
} as unknown as GatewayConfig;

describe('X-Service-Provider value', () => {
  it('is the label, or the protocol’s generic name, never the channel name', () => {
    expect(providerHeader('openai-main', cfg)).toBe('Acme Cloud');
    expect(providerHeader('claude-x', cfg)).toBe('Anthropic');
    expect(providerHeader('gone', cfg)).toBe('Upstream provider');
  });
  it('percent-encodes a label outside ASCII, and it decodes back', () => {
    const v = providerHeader('cn-1', cfg);
    expect(v).toMatch(/^[\x20-\x7e]+$/);
    expect(decodeURIComponent(v)).toBe('阿里云');
    expect(() => new Headers({ 'x-service-provider': v })).not.toThrow();
  });
});
