import { z } from 'zod';
import { route } from './route';

// The gateway's /v1 surfaces, as the document shows them. The gateway does not validate with these:
// each surface parses its own wire format (lib/gateway/surfaces) and answers in its own envelope, and
// unknown fields pass upstream untouched. They say the members a client needs; the providers'
// own references say the rest (docs/protocols.md).

const service = z
  .looseObject({
    region: z.string().max(32).optional().meta({ description: 'serve only from channels of this region (or header x-service-region)' }),
    task: z.string().max(64).optional().meta({ description: 'a hint for model: "service-auto"' }),
  })
  .optional()
  .meta({ description: "the gateway's own options; removed before the body goes upstream" });

const model = z.string().min(1).max(256).meta({ description: 'a model of GET /v1/models, or "service-auto" to let the router choose' });
const idParam = z.object({ id: z.string().max(128) });

export const chatCompletion = z.looseObject({
  model,
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
  max_tokens: z.number().int().optional(),
  max_completion_tokens: z.number().int().optional(),
  temperature: z.number().optional(),
  tools: z.array(z.looseObject({})).optional(),
  service,
});

export const embeddingRequest = z.looseObject({
  model,
  input: z.union([z.string(), z.array(z.string()), z.array(z.number()), z.array(z.array(z.number()))]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  service,
});

export const responseRequest = z.looseObject({
  model,
  input: z.union([z.string(), z.array(z.looseObject({}))]).optional(),
  instructions: z.string().optional(),
  previous_response_id: z.string().optional(),
  store: z.boolean().optional().meta({ description: 'kept for responses.retention_days (default true)' }),
  stream: z.boolean().optional(),
  max_output_tokens: z.number().int().optional(),
  tools: z.array(z.looseObject({})).optional(),
  service,
});

export const anthropicMessages = z.looseObject({
  model,
  max_tokens: z.number().int(),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.unknown() })),
  system: z.unknown().optional(),
  stream: z.boolean().optional(),
  tools: z.array(z.looseObject({})).optional(),
});

export const geminiGenerate = z.looseObject({
  contents: z.array(z.looseObject({ role: z.string().optional(), parts: z.array(z.looseObject({})) })),
  systemInstruction: z.looseObject({}).optional(),
  generationConfig: z.looseObject({}).optional(),
  tools: z.array(z.looseObject({})).optional(),
});

export const videoCreate = z.looseObject({
  model: z.string().max(256).meta({ description: 'a `kind: video` model' }),
  prompt: z.string(),
  seconds: z.union([z.string(), z.number()]).optional().meta({ description: "whole seconds (4 by default), at most the model's max_seconds" }),
  size: z.string().optional().meta({ description: 'WIDTHxHEIGHT, 720x1280 by default' }),
  input_reference: z.string().optional().meta({ description: 'a JPEG, PNG or WebP data URL (or a file part of a multipart body)' }),
});

export const batchCreate = z.looseObject({
  input_file_id: z.string(),
  endpoint: z.enum(['/v1/chat/completions', '/v1/embeddings', '/v1/responses']),
  completion_window: z.literal('24h'),
  metadata: z.record(z.string(), z.string()).optional(),
});

const list = z.object({ limit: z.string().optional(), after: z.string().optional(), order: z.enum(['asc', 'desc']).optional() });
const geminiModel = z.object({
  version: z.enum(['v1beta', 'v1']),
  model_action: z.string().meta({ description: '{model}:generateContent, {model}:streamGenerateContent (SSE with ?alt=sse) or {model}:countTokens' }),
});

export const v1 = {
  chat: route({
    method: 'POST',
    path: '/v1/chat/completions',
    auth: 'key',
    summary: 'OpenAI chat completions (streamed with `stream: true`)',
    body: chatCompletion,
  }),
  embeddings: route({ method: 'POST', path: '/v1/embeddings', auth: 'key', summary: 'OpenAI embeddings', body: embeddingRequest }),
  models: route({
    method: 'GET',
    path: '/v1/models',
    auth: 'key',
    summary: "The models of the caller's tier that have a channel",
    query: z.object({ region: z.string().max(32).optional() }),
  }),
  responses: route({ method: 'POST', path: '/v1/responses', auth: 'key', summary: 'OpenAI Responses API over every chat model', body: responseRequest }),
  responsesCompact: route({ method: 'POST', path: '/v1/responses/compact', auth: 'key', summary: "Codex's remote compaction", body: responseRequest }),
  response: route({ method: 'GET', path: '/v1/responses/{id}', auth: 'key', summary: 'A stored response', params: idParam }),
  responseDelete: route({ method: 'DELETE', path: '/v1/responses/{id}', auth: 'key', summary: 'Delete a stored response', params: idParam }),
  responseInput: route({ method: 'GET', path: '/v1/responses/{id}/input_items', auth: 'key', summary: "A stored response's input", params: idParam }),
  anthropicMessages: route({
    method: 'POST',
    path: '/v1/anthropic/v1/messages',
    auth: 'key',
    summary: 'Anthropic Messages (also /v1/anthropic/messages; ?beta=true accepted)',
    body: anthropicMessages,
  }),
  anthropicCount: route({
    method: 'POST',
    path: '/v1/anthropic/v1/messages/count_tokens',
    auth: 'key',
    summary: 'Anthropic token count (not billed)',
    body: anthropicMessages.omit({ max_tokens: true }),
  }),
  anthropicModels: route({ method: 'GET', path: '/v1/anthropic/v1/models', auth: 'key', summary: "The chat models, in Anthropic's shape" }),
  geminiGenerate: route({
    method: 'POST',
    path: '/v1/gemini/{version}/models/{model_action}',
    auth: 'key',
    summary: 'Gemini generateContent, streamGenerateContent and countTokens (key in x-goog-api-key, ?key= or Authorization)',
    params: geminiModel,
    body: geminiGenerate,
  }),
  geminiModels: route({
    method: 'GET',
    path: '/v1/gemini/{version}/models',
    auth: 'key',
    summary: "The models in Google's shape",
    params: z.object({ version: z.enum(['v1beta', 'v1']) }),
    query: z.object({ pageSize: z.string().optional(), pageToken: z.string().optional() }),
  }),
  geminiModel: route({
    method: 'GET',
    path: '/v1/gemini/{version}/models/{model}',
    auth: 'key',
    summary: 'One model',
    params: z.object({ version: z.enum(['v1beta', 'v1']), model: z.string() }),
  }),
  videoCreate: route({
    method: 'POST',
    path: '/v1/videos',
    auth: 'key',
    summary: 'Generate a video (a job; answers status queued)',
    body: videoCreate,
    bodyTypes: ['multipart/form-data'],
  }),
  videoList: route({ method: 'GET', path: '/v1/videos', auth: 'key', summary: "The account's videos", query: list }),
  video: route({ method: 'GET', path: '/v1/videos/{id}', auth: 'key', summary: 'A video and its status', params: idParam }),
  videoDelete: route({
    method: 'DELETE',
    path: '/v1/videos/{id}',
    auth: 'key',
    summary: 'Delete a video (one in progress is cancelled, nothing charged)',
    params: idParam,
  }),
  videoContent: route({
    method: 'GET',
    path: '/v1/videos/{id}/content',
    auth: 'key',
    summary: 'The MP4 (byte ranges answered 206)',
    params: idParam,
    response: ['video/mp4'],
  }),
  fileCreate: route({
    method: 'POST',
    path: '/v1/files',
    auth: 'key',
    summary: 'Upload a batch input file (multipart: purpose=batch, file)',
    bodyTypes: ['multipart/form-data'],
  }),
  fileList: route({ method: 'GET', path: '/v1/files', auth: 'key', summary: "The account's files" }),
  file: route({ method: 'GET', path: '/v1/files/{id}', auth: 'key', summary: 'A file', params: idParam }),
  fileDelete: route({ method: 'DELETE', path: '/v1/files/{id}', auth: 'key', summary: 'Delete a file', params: idParam }),
  fileContent: route({
    method: 'GET',
    path: '/v1/files/{id}/content',
    auth: 'key',
    summary: "A file's content",
    params: idParam,
    response: ['application/jsonl'],
  }),
  batchCreate: route({ method: 'POST', path: '/v1/batches', auth: 'key', summary: 'Start a batch (every line checked first)', body: batchCreate }),
  batchList: route({ method: 'GET', path: '/v1/batches', auth: 'key', summary: "The account's batches", query: list }),
  batch: route({ method: 'GET', path: '/v1/batches/{id}', auth: 'key', summary: 'A batch and its counts', params: idParam }),
  batchCancel: route({ method: 'POST', path: '/v1/batches/{id}/cancel', auth: 'key', summary: 'Cancel a batch (lines in flight finish)', params: idParam }),
};
