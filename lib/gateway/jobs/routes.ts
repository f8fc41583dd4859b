// The /v1 routes of work that runs as jobs (videos, files and batches), and the start of the job
// engine with their handlers: the one hook of each into the gateway's handler and server.
import type { RequestContext } from '@/lib/gateway/context';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { startJobEngine } from '@/lib/gateway/jobs/engine';
import { registerVideoJobs } from '@/lib/gateway/videos/job';
import { videoParamRoutes, videoRoutes } from '@/lib/gateway/videos/routes';
import { registerBatchJobs } from '@/lib/gateway/batches/job';
import { batchParamRoutes, batchRoutes } from '@/lib/gateway/batches/routes';

type Route = (ctx: RequestContext, req: GatewayRequest, sink: ResponseSink) => Promise<void>;

export const jobRoutes: Record<string, Route> = { ...videoRoutes, ...batchRoutes };
export const jobParamRoutes: Record<string, Route> = { ...videoParamRoutes, ...batchParamRoutes };

export function startJobs(): void {
  registerVideoJobs();
  registerBatchJobs();
  startJobEngine();
}
