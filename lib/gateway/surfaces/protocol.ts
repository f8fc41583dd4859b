// What a client protocol says about answers, whatever the route: its error envelope, its stream
// error event, its own response headers, how an unknown model is answered, and which limits a
// request that never reached a surface is counted against. A route names its protocol (the
// handler's route table); nothing asks the path which one it is.
import { anthropicErrorBody, geminiErrorBody, openaiErrorBody, type GatewayError } from '@/lib/errors';
import type { Endpoint } from '@/lib/gateway/admission';

export interface ClientProtocol {
  /** Its name in spans and metrics. */
  readonly name: 'openai' | 'anthropic' | 'gemini';
  /** An error as this protocol's clients read it (a whole reply's body). */
  errorBody(err: GatewayError): string;
  /** An error ending a stream that has begun, as this protocol's stream event. */
  streamErrorEvent(err: GatewayError): string;
  /** Headers of its own on every answer (Anthropic's SDK reads `request-id`). */
  addHeaders?(headers: Record<string, string>, requestId: string): void;
  /** The status of a model name that cannot be one (default 400). */
  readonly modelNotFoundStatus?: number;
  /** The limits a request refused before its surface knew it is counted against. */
  readonly endpoint: Endpoint;
}

export const openaiProtocol: ClientProtocol = {
  name: 'openai',
  errorBody: openaiErrorBody,
  streamErrorEvent: (err) => `data: ${openaiErrorBody(err)}\n\n`,
  endpoint: 'chat',
};

/** The OpenAI protocol's embeddings route: refusals counted against the embeddings limits. */
export const embeddingsProtocol: ClientProtocol = { ...openaiProtocol, endpoint: 'embeddings' };

export const anthropicProtocol: ClientProtocol = {
  name: 'anthropic',
  errorBody: anthropicErrorBody,
  streamErrorEvent: (err) => `event: error\ndata: ${anthropicErrorBody(err)}\n\n`,
  // The header Anthropic's SDK reads into `requestID`.
  addHeaders: (headers, requestId) => {
    headers['request-id'] = requestId;
  },
  // As for any unknown model on the mirror: Anthropic answers 404 not_found_error.
  modelNotFoundStatus: 404,
  endpoint: 'anthropic',
};

export const geminiProtocol: ClientProtocol = {
  name: 'gemini',
  errorBody: geminiErrorBody,
  streamErrorEvent: (err) => `data: ${geminiErrorBody(err)}\n\n`,
  endpoint: 'chat',
};
