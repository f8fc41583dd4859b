import { describe, it, expect } from 'vitest';
import { rebaseAuthResponse } from '@/lib/auth/origin-rebase';
import { env } from '@/lib/env';

// next-auth answers with http://localhost:3000 when NEXTAUTH_URL is unset; these run without it
// and without TRUST_PROXY, so the request's Host decides.
const request = (host: string, headers: Record<string, string> = {}) =>
  new Request(`http://${host}/api/auth/signout`, { method: 'POST', headers: { host, ...headers } });

describe.skipIf(Boolean(env.NEXTAUTH_URL) || env.TRUST_PROXY)('next-auth URLs on the request origin', () => {
  it('moves the JSON url, the Location and the callback-url cookie onto the origin asked', async () => {
    const res = new Response(JSON.stringify({ url: 'http://localhost:3000/dashboard?x=1' }), {
      headers: {
        'content-type': 'application/json',
        location: 'http://localhost:3000/login',
        'set-cookie': 'next-auth.callback-url=http%3A%2F%2Flocalhost%3A3000%2Fdashboard; Path=/; HttpOnly',
      },
    });
    const out = await rebaseAuthResponse(request('gw.internal:8080'), res);
    expect(await out.json()).toEqual({ url: 'http://gw.internal:8080/dashboard?x=1' });
    expect(out.headers.get('location')).toBe('http://gw.internal:8080/login');
    expect(out.headers.getSetCookie()).toEqual(['next-auth.callback-url=http%3A%2F%2Fgw.internal%3A8080%2Fdashboard; Path=/; HttpOnly']);
  });

  it('leaves other URLs and bodies alone, and ignores X-Forwarded-Host without TRUST_PROXY', async () => {
    const res = new Response(JSON.stringify({ url: 'http://localhost:30001/x', csrfToken: 't' }), { headers: { 'content-type': 'application/json' } });
    const out = await rebaseAuthResponse(request('gw.internal:8080', { 'x-forwarded-host': 'evil.example' }), res);
    expect(await out.json()).toEqual({ url: 'http://localhost:30001/x', csrfToken: 't' });
    const moved = await rebaseAuthResponse(
      request('gw.internal:8080', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }),
      new Response(JSON.stringify({ url: 'http://localhost:3000/' }), { headers: { 'content-type': 'application/json' } }),
    );
    expect(await moved.json()).toEqual({ url: 'http://gw.internal:8080/' });
  });
});
