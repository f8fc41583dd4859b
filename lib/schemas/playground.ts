import { route } from './route';

// The dashboard playground's credential.

export const playground = {
  token: route({
    method: 'POST',
    path: '/api/playground/token',
    auth: 'session',
    summary: 'A short-lived credential for the playground, bound to this session and site',
  }),
};
