import { idParam, route } from './route';

// Jobs (videos, batches) as the dashboard previews them.

export const jobs = {
  content: route({
    method: 'GET',
    path: '/api/jobs/{id}/content',
    auth: 'session',
    summary: "A finished job's file: the video (byte ranges) or the batch's output",
    params: idParam,
    response: ['video/mp4', 'application/jsonl'],
  }),
};
