import { GatewayError } from '@/lib/errors';
import type { RequestContext } from '@/lib/gateway/context';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';

export async function anthropicMessages(_ctx: RequestContext, _req: GatewayRequest, _sink: ResponseSink): Promise<void> {
  throw new GatewayError('not_found', 'not implemented yet');
}

export async function anthropicCountTokens(_ctx: RequestContext, _req: GatewayRequest, _sink: ResponseSink): Promise<void> {
  throw new GatewayError('not_found', 'not implemented yet');
}
