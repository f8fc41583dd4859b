import { z } from 'zod';
import { coded, route } from './route';

// Signing up and in. next-auth's own endpoints (/api/auth/{nextauth}) are its business: listed, not described.

export const credentials = z.object({
  email: coded(z.string().min(1).max(320), 'request.field_required', { field: 'email' }).meta({ examples: ['you@example.com'] }),
  password: coded(z.string().min(1).max(1024), 'request.field_required', { field: 'password' }),
});

export const passwordResetRequest = z.object({ email: coded(z.string().min(1).max(320), 'request.field_required', { field: 'email' }) });
export const passwordResetConfirm = z.object({
  token: z.string().max(512).meta({ description: "the mailed link's token" }),
  password: coded(z.string().max(1024), 'auth.new_password_missing').meta({ description: 'the new password' }),
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
  passwordReset: route({
    method: 'POST',
    path: '/api/auth/password-reset',
    auth: 'none',
    summary: 'Mail a reset link when an account has that address (the same answer either way; 503 without SMTP)',
    body: passwordResetRequest,
    status: 202,
  }),
  passwordResetConfirm: route({
    method: 'POST',
    path: '/api/auth/password-reset/confirm',
    auth: 'none',
    summary: 'Set a new password with a mailed link (single use); every session of the account ends',
    body: passwordResetConfirm,
  }),
  verifyEmail: route({
    method: 'GET',
    path: '/api/auth/verify-email',
    auth: 'none',
    summary: 'The mailed verification link: marks the address verified and redirects (303) to the billing page',
    query: z.object({ token: z.string().max(512).optional() }),
    status: 303,
    response: [],
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
