import { z } from 'zod';
import { route } from './route';

// Monthly statements and recharge receipts of the acting account.

export const statementFile = z.object({ file: z.string().max(32).meta({ description: 'YYYY-MM (JSON), YYYY-MM.csv or YYYY-MM.pdf' }) });

export const statements = {
  statement: route({
    method: 'GET',
    path: '/api/statements/{file}',
    auth: 'session',
    summary: "A month's statement (UTC month)",
    params: statementFile,
    response: ['application/json', 'text/csv', 'application/pdf'],
  }),
  receipt: route({
    method: 'GET',
    path: '/api/receipts/{file}',
    auth: 'session',
    summary: 'The receipt of a paid recharge',
    params: z.object({ file: z.string().max(128).meta({ description: '{paymentId}.pdf' }) }),
    response: ['application/pdf'],
  }),
};
