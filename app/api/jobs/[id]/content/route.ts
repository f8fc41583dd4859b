// GET /api/jobs/:id/content - the dashboard's preview of a finished job of the caller's: a video
// (streamed, with a byte range as browsers' players ask) or a batch's output file.
import { Readable } from 'node:stream';
import { apiRoute, requireUserId } from '@/lib/http/api';
import { GatewayError } from '@/lib/errors';
import { getConfig } from '@/lib/config';
import { getJob } from '@/lib/gateway/jobs/store';
import { videoKey } from '@/lib/gateway/videos/job';
import { videoStorage } from '@/lib/gateway/videos/storage';
import { fileContent } from '@/lib/gateway/batches/files';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const userId = await requireUserId(req);
  const job = /^(video|batch)_[0-9a-f]{48}$/.test(params.id) ? await getJob(params.id, userId) : null;
  if (!job || job.status !== 'succeeded') throw new GatewayError('not_found', 'No finished job with this id.');
  if (job.kind === 'batch') {
    const id = (job.result as { output_file_id?: string } | null)?.output_file_id;
    const content = id ? await fileContent(id, userId) : null;
    if (!content) throw new GatewayError('not_found', 'This batch has no output file.');
    return new Response(new Uint8Array(content), {
      headers: { 'content-type': 'application/jsonl', 'content-disposition': `attachment; filename="${job.id}_output.jsonl"` },
    });
  }
  const storage = videoStorage(getConfig());
  const size = await storage.size(videoKey(job.id));
  if (size === null) throw new GatewayError('not_found', 'The file of this video is no longer kept.');
  const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.get('range') ?? '');
  const start = m ? Number(m[1]) : 0;
  const end = m && m[2] ? Math.min(size - 1, Number(m[2])) : size - 1;
  if (start > end) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${size}` } });
  const body = Readable.toWeb(await storage.read(videoKey(job.id), start, end)) as ReadableStream;
  return new Response(body, {
    status: m ? 206 : 200,
    headers: {
      'content-type': 'video/mp4',
      'content-length': String(end - start + 1),
      'accept-ranges': 'bytes',
      ...(m ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
    },
  });
});
