// Minimal, fast fake LLM upstream for the benchmark (node:http, constant precomputed bodies).
//
//   POST …/chat/completions   OpenAI chat; `"stream":true` in the body → SSE stream of --chunks
//                             content chunks, --chunk-ms apart (the first at once), then a usage
//                             chunk and [DONE]; otherwise one JSON reply with usage. Under the
//                             path prefix /long (e.g. /long/v1/chat/completions) a stream's chunks
//                             are --long-chunk-ms apart instead: the long streams of the
//                             concurrent-streams check, from the same process.
//   POST …/embeddings         OpenAI embeddings with usage (1536 dimensions, 1024 for bge-m3),
//                             one vector per input string.
//   POST …/messages           Anthropic Messages, non-stream (and a short SSE stream) with usage.
//   GET  …/models             a tiny model list.
//
// Usage: node bench/upstream.mjs [--port 0] [--host 127.0.0.1] [--delay-ms 0] [--chunks 20] [--chunk-ms 5] [--long-chunk-ms 50]
// Prints one JSON line {"url": "...", "port": N} on stdout once listening.
// The request body is never JSON-parsed on the hot path (substring checks only), so this
// process stays cheap next to the proxies being measured.
import http from 'node:http';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.BENCH_UPSTREAM_PORT ?? '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'delay-ms': { type: 'string', default: process.env.BENCH_UPSTREAM_DELAY_MS ?? '0' },
    chunks: { type: 'string', default: process.env.BENCH_STREAM_CHUNKS ?? '20' },
    'chunk-ms': { type: 'string', default: process.env.BENCH_STREAM_CHUNK_MS ?? '5' },
    'long-chunk-ms': { type: 'string', default: '50' },
  },
});
const DELAY_MS = Number(args['delay-ms']);
const CHUNKS = Math.max(1, Number(args.chunks));
const CHUNK_MS = Number(args['chunk-ms']);
const LONG_CHUNK_MS = Number(args['long-chunk-ms']);

// ---- precomputed bodies --------------------------------------------------------------------
const CREATED = 1_700_000_000;
const chatBody = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench0001',
    object: 'chat.completion',
    created: CREATED,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
    system_fingerprint: 'fp_bench',
  }),
);
const chatHeaders = { 'content-type': 'application/json', 'content-length': String(chatBody.length) };

const sse = (obj) => `data: ${JSON.stringify(obj)}\n\n`;
const chunk = (delta, finish = null) => ({
  id: 'chatcmpl-bench0002',
  object: 'chat.completion.chunk',
  created: CREATED,
  model: 'gpt-4o-mini',
  system_fingerprint: 'fp_bench',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
/** streamParts[i] is written at i * CHUNK_MS; the last part also carries usage and [DONE]. */
const streamParts = [];
for (let i = 0; i < CHUNKS; i++) {
  let part = sse(chunk(i === 0 ? { role: 'assistant', content: 'tok0 ' } : { content: `tok${i} ` }));
  if (i === CHUNKS - 1) {
    part += sse(chunk({}, 'stop'));
    part += sse({
      id: 'chatcmpl-bench0002',
      object: 'chat.completion.chunk',
      created: CREATED,
      model: 'gpt-4o-mini',
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS },
    });
    part += 'data: [DONE]\n\n';
  }
  streamParts.push(Buffer.from(part));
}
const sseHeaders = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

const embeddingCache = new Map();
function embeddingBody(dims, count) {
  const key = `${dims}x${count}`;
  let body = embeddingCache.get(key);
  if (!body) {
    const vector = Array.from({ length: dims }, (_, i) => Number((((i * 7919) % 2000) / 1000 - 1).toFixed(6)));
    body = Buffer.from(
      JSON.stringify({
        object: 'list',
        data: Array.from({ length: count }, (_, index) => ({ object: 'embedding', index, embedding: vector })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 5 * count, total_tokens: 5 * count },
      }),
    );
    if (embeddingCache.size < 64) embeddingCache.set(key, body);
  }
  return body;
}

const messagesBody = Buffer.from(
  JSON.stringify({
    id: 'msg_bench0001',
    type: 'message',
    role: 'assistant',
    model: 'claude-haiku-4-5',
    content: [{ type: 'text', text: 'Hello from the bench upstream.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  }),
);
const messagesHeaders = { 'content-type': 'application/json', 'content-length': String(messagesBody.length) };
const ev = (type, obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...obj })}\n\n`;
const messagesStream = Buffer.from(
  ev('message_start', {
    message: {
      id: 'msg_bench0002',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  }) +
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello from the bench upstream.' } }) +
    ev('content_block_stop', { index: 0 }) +
    ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }) +
    ev('message_stop', {}),
);
const modelsBody = Buffer.from(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: CREATED, owned_by: 'bench' }] }));

// ---- server --------------------------------------------------------------------------------
function sendStream(res, chunkMs) {
  res.writeHead(200, sseHeaders);
  let i = 0;
  let timer;
  const next = () => {
    if (res.destroyed) return;
    const part = streamParts[i++];
    if (i === streamParts.length) return void res.end(part);
    res.write(part);
    timer = setTimeout(next, chunkMs);
  };
  res.on('close', () => clearTimeout(timer));
  next();
}

function reply(req, res, body) {
  const url = req.url ?? '/';
  const stream = body.includes('"stream":true');
  if (url.endsWith('/chat/completions')) {
    if (stream) return sendStream(res, url.startsWith('/long/') ? LONG_CHUNK_MS : CHUNK_MS);
    res.writeHead(200, chatHeaders);
    return void res.end(chatBody);
  }
  if (url.endsWith('/embeddings')) {
    const dims = body.includes('"bge-m3"') ? 1024 : 1536;
    let count = 1;
    if (body.includes('"input":[')) {
      try {
        count = JSON.parse(body).input.length;
      } catch {
        count = 1;
      }
    }
    const out = embeddingBody(dims, count);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(out.length) });
    return void res.end(out);
  }
  if (url.endsWith('/messages/count_tokens')) {
    const out = '{"input_tokens":12}';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(out.length) });
    return void res.end(out);
  }
  if (url.endsWith('/messages')) {
    if (stream) {
      res.writeHead(200, sseHeaders);
      return void res.end(messagesStream);
    }
    res.writeHead(200, messagesHeaders);
    return void res.end(messagesBody);
  }
  if (url.endsWith('/models')) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(modelsBody.length) });
    return void res.end(modelsBody);
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
}

const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    if (DELAY_MS > 0) setTimeout(() => reply(req, res, body), DELAY_MS);
    else reply(req, res, body);
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.requestTimeout = 0;

// A provider behind its load balancers does not drop SYNs: a queue as long as the gateway's (LISTEN_BACKLOG).
server.listen({ port: Number(args.port), host: args.host, backlog: 4096 }, () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://${args.host}:${port}`, port })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
