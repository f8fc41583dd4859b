import { z } from 'zod';
import { route } from '../route';

// The request-log export to an outside sink (docs/decisions/031).

export const replay = z
  .object({
    from: z.string().min(1).max(40).meta({ description: 'a day (YYYY-MM-DD) or a timestamp' }),
    to: z.string().min(1).max(40).meta({ description: 'at most 31 days after from' }),
  })
  .strict();

export const adminLogExport = {
  status: route({ method: 'GET', path: '/api/admin/log-export', auth: 'admin', summary: "The export's sink, cursor, last error and replays" }),
  replay: route({
    method: 'POST',
    path: '/api/admin/log-export/replay',
    auth: 'admin',
    summary: 'Re-send the rows of [from, to) to the sink, as batches marked "replay"',
    body: replay,
    status: 202,
  }),
};
