import { z } from 'zod';
import { coded, route } from './route';

// The signed-in person's own account: /api/me, /api/account, its password and sessions.

export const passwordChange = z.object({
  current_password: coded(z.string().max(1024), 'auth.current_password_missing').meta({ description: 'the password now' }),
  new_password: coded(z.string().max(1024), 'auth.new_password_missing').meta({ description: 'at least 8 characters, not a common one' }),
});

export const accountDelete = z.object({ password: coded(z.string().max(1024), 'auth.current_password_missing') });

export const account = {
  me: route({ method: 'GET', path: '/api/me', auth: 'session', summary: 'The signed-in account' }),
  delete: route({
    method: 'DELETE',
    path: '/api/account',
    auth: 'session',
    summary: 'Delete the account (password required): keys revoked, personal data removed, ledger kept',
    body: accountDelete,
  }),
  password: route({
    method: 'POST',
    path: '/api/account/password',
    auth: 'session',
    summary: 'Change the password; other sessions end, this one gets a fresh cookie',
    body: passwordChange,
  }),
  verifyEmail: route({
    method: 'POST',
    path: '/api/account/verify-email',
    auth: 'session',
    summary: "Send the signed-in person's verification link again (3 a minute; 503 when the mail could not be sent)",
  }),
  signOutEverywhere: route({
    method: 'POST',
    path: '/api/account/sign-out-everywhere',
    auth: 'session',
    summary: 'End every session of the account, this one included',
  }),
};
