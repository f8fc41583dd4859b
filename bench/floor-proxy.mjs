// The floor: the least a proxy can do. node:http in front, undici request with a keep-alive
// Agent (same settings as the gateway's upstream agent) behind; the request body is read whole
// (as the gateway does), the response body is piped back chunk by chunk (streams stay streams).
// No auth, no parsing, no limits, no logging.
// Diagnosis only, for `npm run bench -- --ttfb-breakdown`: `--client http` uses node:http's own
// keep-alive Agent behind instead of undici; `--client dispatch` uses undici's dispatcher API with a
// plain handler (no Readable, no promise), which is how the gateway calls its upstreams.
//
// Usage: node bench/floor-proxy.mjs --upstream http://127.0.0.1:PORT [--port 0] [--host 127.0.0.1] [--client undici|http|dispatch]
// Prints one JSON line {"url": "...", "port": N} on stdout once listening.
import http from 'node:http';
import { pipeline } from 'node:stream';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values: args } = parseArgs({
  options: {
    upstream: { type: 'string' },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    client: { type: 'string', default: 'undici' },
  },
});
if (!args.upstream) {
  process.stderr.write('floor-proxy: --upstream URL is required\n');
  process.exit(2);
}
if (!['undici', 'http', 'dispatch'].includes(args.client)) {
  process.stderr.write('floor-proxy: --client takes undici, http or dispatch\n');
  process.exit(2);
}
const upstream = args.upstream.replace(/\/$/, '');
const upstreamUrl = new URL(upstream);
const httpAgent = new http.Agent({ keepAlive: true });
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connections: null, pipelining: 1 });

// Hop-by-hop headers are not forwarded (RFC 9110 §7.6.1), nor is the client's host.
// The request's content-length is recomputed by undici from the buffered body.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);
function forwardHeaders(raw, drop) {
  const out = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined && !HOP.has(k) && !drop?.has(k)) out[k] = v;
  return out;
}
const REQUEST_ONLY = new Set(['host', 'content-length']);

function fail(res, status, message) {
  if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'proxy_error' } }));
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    if (args.client === 'http') {
      const headers = forwardHeaders(req.headers, REQUEST_ONLY);
      if (body) headers['content-length'] = body.length;
      const up = http.request(
        {
          host: upstreamUrl.hostname,
          port: upstreamUrl.port,
          path: upstreamUrl.pathname.replace(/\/$/, '') + req.url,
          method: req.method,
          headers,
          agent: httpAgent,
          signal: ac.signal,
        },
        (ur) => {
          res.writeHead(ur.statusCode, forwardHeaders(ur.headers));
          pipeline(ur, res, () => undefined);
        },
      );
      up.on('error', (err) => fail(res, 502, `upstream failed: ${err.code ?? err.message}`));
      return void up.end(body);
    }
    if (args.client === 'dispatch') {
      let controller;
      ac.signal.addEventListener('abort', () => controller?.abort(new Error('client closed')));
      return void agent.dispatch(
        {
          origin: upstreamUrl.origin,
          path: upstreamUrl.pathname.replace(/\/$/, '') + req.url,
          method: req.method,
          headers: forwardHeaders(req.headers, REQUEST_ONLY),
          body,
        },
        {
          onRequestStart: (c) => void (controller = c),
          onResponseStart: (c, status, headers) => res.writeHead(status, forwardHeaders(headers)),
          // Backpressure: the upstream socket pauses while the client's socket is full.
          onResponseData: (c, chunk) => {
            if (!res.write(chunk)) {
              c.pause();
              res.once('drain', () => c.resume());
            }
          },
          onResponseEnd: () => res.end(),
          onResponseError: (c, err) => (res.headersSent ? res.destroy(err) : fail(res, 502, `upstream failed: ${err.code ?? err.message}`)),
        },
      );
    }
    request(upstream + req.url, { method: req.method, headers: forwardHeaders(req.headers, REQUEST_ONLY), body, dispatcher: agent, signal: ac.signal }).then(
      (up) => {
        res.writeHead(up.statusCode, forwardHeaders(up.headers));
        pipeline(up.body, res, () => undefined);
      },
      (err) => fail(res, 502, `upstream failed: ${err.code ?? err.message}`),
    );
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.requestTimeout = 0;

// The same pending-connection queue as the gateway's (LISTEN_BACKLOG, 4096; node's default is 511).
server.listen({ port: Number(args.port), host: args.host, backlog: 4096 }, () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://${args.host}:${port}`, port })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  void agent.close();
  httpAgent.destroy();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
