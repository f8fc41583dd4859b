import { z } from 'zod';
import { coded, route } from './route';

// Signing up and in. next-auth's own endpoints (/api/auth/{nextauth}) are its business: listed, not described.

export const credentials = z.object({
  email: coded(z.string().min(1).max(320), 'request.field_required', { field: 'email' }).meta({ examples: ['you@example.com'] }),
  password: coded(z.string().min(1).max(1024), 'request.field_required', { field: 'password' }),
});

export const auth = {
  login: route({
    method: 'POST',
    path: '/api/auth/login',
    auth: 'none',
    summary: 'Check email and password; answers the account and a session cookie (10 per IP per minute)',
    body: credentials,
  }),
  register: route({
    method: 'POST',
    path: '/api/auth/register',
    auth: 'none',
    summary: 'Create an account and sign in (3 per IP per minute)',
    body: credentials,
    status: 201,
  }),
  nextauthGet: route({
    method: 'GET',
    path: '/api/auth/{nextauth}',
    auth: 'none',
    summary: "next-auth's endpoints (session, csrf, providers, signout)",
    params: z.object({ nextauth: z.string() }),
  }),
  nextauthPost: route({
    method: 'POST',
    path: '/api/auth/{nextauth}',
    auth: 'none',
    summary: "next-auth's endpoints",
    params: z.object({ nextauth: z.string() }),
  }),
};
