import { route } from './route';

// The operations endpoints beside the API.

export const ops = {
  healthz: route({ method: 'GET', path: '/healthz', auth: 'none', summary: 'Liveness' }),
  readyz: route({ method: 'GET', path: '/readyz', auth: 'none', summary: 'Readiness (503 while the database is unreachable)' }),
  openapi: route({ method: 'GET', path: '/openapi.json', auth: 'none', summary: 'This document (OpenAPI 3.1)' }),
  metrics: route({
    method: 'GET',
    path: '/metrics',
    auth: 'none',
    summary: 'Prometheus text (Authorization: Bearer $METRICS_TOKEN; 404 when unset)',
    response: ['text/plain'],
  }),
};
