// OpenTelemetry traces of /v1 requests (docs/decisions/027-opentelemetry-traces.md).
//
// Off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; or OTEL_TRACES_EXPORTER names an exporter): then nothing of the
// SDK is even imported, and each hook on the request path is one test of an undefined field. The
// standard OTEL_* variables work as the specification defines them (docs/decisions/044). On, the SDK is imported once at start-up
// (`initTracing`) and the pipeline's hooks make spans by hand with the API: one SERVER span per
// request (GenAI semantic conventions), children for admission, each upstream attempt and the log
// write. Contexts are passed explicitly (no async-hooks context manager: nothing to pay per await).
import type { Attributes, Context, Span, TextMapGetter, TextMapPropagator, TextMapSetter, Tracer } from '@opentelemetry/api';
import { singleton } from '@/lib/singleton';
import { log, errorFields } from '@/lib/log';

interface Otel {
  api: typeof import('@opentelemetry/api');
  tracer: Tracer;
  propagator: TextMapPropagator;
  /** The header names the propagators read (traceparent, tracestate, baggage). */
  propagationHeaders: string[];
  /** Prompt and completion text on the request span (opt-in). */
  captureContent: boolean;
  provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
}

// Shared by the custom server's bundle and Next's (lib/singleton.ts): one provider per process.
const state = singleton('otel-tracing', () => ({ otel: null as Otel | null, starting: null as Promise<boolean> | null }));

/** The environment (process.env; tests pass their own). */
type Env = Record<string, string | undefined>;

const truthy = (v: string | undefined) => v !== undefined && ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase());
const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);

/** The trace exporters asked for (OTEL_TRACES_EXPORTER; the spec's default `otlp`). */
function exportersOf(e: Env): string[] {
  const named = list(e.OTEL_TRACES_EXPORTER);
  return named.length ? named : ['otlp'];
}

/**
 * Whether the environment asks for traces: not OTEL_SDK_DISABLED=true (the spec's boolean: only
 * `true` disables), an exporter that is not `none`, and for OTLP an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT
 * or _TRACES_ENDPOINT) or an explicit OTEL_TRACES_EXPORTER=otlp (the SDK's default endpoint then,
 * localhost:4318). Nothing set: off, and nothing of the SDK is imported.
 */
export function tracingConfigured(e: Env = process.env): boolean {
  if (e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = exportersOf(e);
  if (exporters.includes('none')) return false;
  if (exporters.includes('console')) return true;
  const endpoint = Boolean(e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || e.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
  return exporters.includes('otlp') && (endpoint || e.OTEL_TRACES_EXPORTER !== undefined);
}

/**
 * The OTLP encoding asked for (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL):
 * http/protobuf (the default) or http/json. `grpc` is not built in (it would add @grpc/grpc-js): it
 * is answered with a warning at start-up and http/protobuf, as is any other value.
 */
export function otlpProtocol(e: Env = process.env): 'http/protobuf' | 'http/json' {
  const name = e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const p = (e[name] ?? '').trim().toLowerCase() || 'http/protobuf';
  if (p === 'http/json' || p === 'http/protobuf') return p;
  if (p === 'grpc')
    log(
      'warn',
      `${name}=grpc is not supported by this gateway (OTLP over HTTP only, no gRPC exporter installed); exporting traces over http/protobuf instead: point the endpoint at the collector's OTLP/HTTP port (4318), not its gRPC port (4317)`,
      { variable: name, requested: 'grpc', using: 'http/protobuf' },
    );
  else
    log('warn', `${name}=${p} is not an OTLP protocol (http/protobuf, http/json); exporting traces over http/protobuf`, {
      variable: name,
      requested: p,
      using: 'http/protobuf',
    });
  return 'http/protobuf';
}

/** Propagators this gateway can run (OTEL_PROPAGATORS); the spec's others need packages it does not install. */
const PROPAGATORS = ['tracecontext', 'baggage'] as const;
type PropagatorName = (typeof PROPAGATORS)[number];

/**
 * The propagators OTEL_PROPAGATORS asks for (the spec's default `tracecontext,baggage`; `none`: none),
 * and the names this gateway cannot run (b3, b3multi, jaeger, xray, ottrace: no such package is
 * installed), which are left out with a warning at start-up.
 */
export function propagatorsOf(e: Env = process.env): { use: PropagatorName[]; unsupported: string[] } {
  const named = list(e.OTEL_PROPAGATORS);
  if (named.length === 0) return { use: [...PROPAGATORS], unsupported: [] };
  if (named.includes('none')) return { use: [], unsupported: [] };
  const use = PROPAGATORS.filter((p) => named.includes(p));
  return { use, unsupported: [...new Set(named.filter((n) => !(PROPAGATORS as readonly string[]).includes(n)))] };
}

/**
 * Starts tracing when configured (once per process; later calls wait for the first). Resolves
 * whether tracing is on. The SDK reads the standard variables itself: the exporters the
 * OTEL_EXPORTER_OTLP_(TRACES_)* ones (endpoint, headers, timeout, compression, certificates), the
 * tracer provider OTEL_TRACES_SAMPLER(_ARG) and the span and attribute limits, the batch processor
 * OTEL_BSP_*, the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. This module picks what the
 * SDK leaves to its caller: the exporter (OTEL_TRACES_EXPORTER), its protocol, the propagators
 * (OTEL_PROPAGATORS) and the SDK's own log level (OTEL_LOG_LEVEL).
 */
export function initTracing(e: Env = process.env): Promise<boolean> {
  if (state.otel) return Promise.resolve(true);
  if (!tracingConfigured(e)) return Promise.resolve(false);
  return (state.starting ??= start(e).catch((err) => {
    log('error', 'OpenTelemetry tracing could not start; requests are served untraced', errorFields(err));
    return false;
  }));
}

async function start(e: Env): Promise<boolean> {
  const exporters = exportersOf(e);
  const otlp = exporters.includes('otlp');
  const protocol = otlp ? otlpProtocol(e) : undefined;
  const [api, core, resources, base, exporterModule] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    protocol === undefined
      ? undefined
      : protocol === 'http/json'
        ? import('@opentelemetry/exporter-trace-otlp-http')
        : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  // The SDK's own messages (an export the collector refused or never answered) in our log, at
  // OTEL_LOG_LEVEL (default: warnings and errors).
  const forward =
    (level: 'warn' | 'info' | 'debug') =>
    (message: string, ...args: unknown[]) =>
      log(level, `OpenTelemetry: ${message}`, args.length ? { detail: args.map(String).join(' ') } : {});
  api.diag.setLogger(
    { error: forward('warn'), warn: forward('warn'), info: forward('info'), debug: forward('debug'), verbose: forward('debug') },
    { logLevel: core.diagLogLevelFromString(e.OTEL_LOG_LEVEL) ?? api.DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  for (const name of exporters.filter((x) => x !== 'otlp' && x !== 'console'))
    log('warn', `OTEL_TRACES_EXPORTER=${name} is not supported by this gateway (otlp, console, none); left out`, {
      variable: 'OTEL_TRACES_EXPORTER',
      ignored: name,
    });
  const { use, unsupported } = propagatorsOf(e);
  if (unsupported.length)
    log(
      'warn',
      `OTEL_PROPAGATORS: ${unsupported.join(', ')} not supported by this gateway (tracecontext, baggage, none; no other propagator is installed); left out`,
      {
        variable: 'OTEL_PROPAGATORS',
        ignored: unsupported,
        using: use,
      },
    );
  const propagators: TextMapPropagator[] = use.map((p) => (p === 'tracecontext' ? new core.W3CTraceContextPropagator() : new core.W3CBaggagePropagator()));
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'model-gateway' }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const spanProcessors = [];
  if (exporterModule) spanProcessors.push(new base.BatchSpanProcessor(new exporterModule.OTLPTraceExporter()));
  if (exporters.includes('console')) spanProcessors.push(new base.SimpleSpanProcessor(new base.ConsoleSpanExporter()));
  const provider = new base.BasicTracerProvider({ resource, spanProcessors });
  const propagator = new core.CompositePropagator({ propagators });
  state.otel = {
    api,
    tracer: provider.getTracer('model-gateway'),
    propagator,
    // The headers the propagators read: a request without any of them starts its own trace (no extract call).
    propagationHeaders: propagator.fields(),
    captureContent: truthy(e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
    provider,
  };
  log('info', 'OpenTelemetry tracing on', {
    exporters: exporters.filter((x) => x === 'otlp' || x === 'console'),
    protocol,
    propagators: use,
    sampler: e.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
  });
  return true;
}

/** Sends the spans still batched and stops the provider (shutdown). */
export async function shutdownTracing(): Promise<void> {
  const otel = state.otel;
  if (!otel) return;
  state.otel = null;
  await otel.provider.shutdown().catch((err) => log('warn', 'OpenTelemetry shutdown failed', errorFields(err)));
}

/** Sends the spans still batched (tests, benchmarks). */
export async function flushTracing(): Promise<void> {
  await state.otel?.provider.forceFlush();
}

const headerGetter: TextMapGetter<Record<string, string | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** gen_ai.provider.name of a channel's protocol. */
const PROVIDER_NAMES: Record<string, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'gcp.gemini' };

/** The largest prompt or completion text put on a span when content capture is on (characters). */
const MAX_CONTENT_CHARS = 128 * 1024;

/** What the request span reads of the request record when the request ends (a structural view: no import cycle). */
export interface TracedRequest {
  readonly requestId: string;
  readonly endpoint: string;
  readonly surface: string;
  readonly stream: boolean;
  readonly status: number;
  readonly outcome: string;
  readonly errorCode: string | null;
  readonly modelRequested: string | null;
  readonly model?: { name: string };
  readonly channel: string | null;
  /** What the request's settlement counted (lib/gateway/settlement.ts). */
  readonly charge: { readonly usage: { promptTokens: number; completionTokens: number; cacheReadTokens: number; cacheWriteTokens: number } };
  readonly firstTokenMs: number | null;
  readonly attempts: readonly unknown[];
  readonly routeReason: string | null;
}

/** What an attempt span reads of its attempt record when it ends. */
export interface TracedAttempt {
  readonly ok: boolean;
  readonly status?: number;
  readonly error?: string;
}

/** gen_ai.operation.name for a gateway endpoint. */
export function operationOf(endpoint: string, surface: string): string | undefined {
  if (endpoint === '/v1/embeddings') return 'embeddings';
  if (endpoint.endsWith('/count_tokens') || endpoint.includes('countTokens')) return 'count_tokens';
  if (surface === 'gemini') return endpoint.includes('embed') ? 'embeddings' : 'generate_content';
  if (endpoint === '/v1/chat/completions' || endpoint.endsWith('/messages') || endpoint.startsWith('/v1/responses')) return 'chat';
  return undefined;
}

/** One request's spans. Made only when tracing is on (`startRequestTrace`). */
export class RequestTrace {
  private readonly context: Context;
  /** Children not ended yet (an attempt the client left during): ended with the request. */
  private readonly open = new Set<Span>();
  private provider: string | undefined;
  private output: string | undefined;

  constructor(
    private readonly otel: Otel,
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = otel.api.trace.setSpan(parent, span);
  }

  get captureContent(): boolean {
    return this.otel.captureContent;
  }

  private child(name: string, kind: number, attributes?: Attributes): Span {
    const span = this.otel.tracer.startSpan(name, { kind, attributes }, this.context);
    this.open.add(span);
    return span;
  }

  private close(span: Span): void {
    if (this.open.delete(span)) span.end();
  }

  /** The admission span (limits, balance reservation); `done` ends it, with the refusal's code if refused. */
  admission(speculative: boolean, reserve: bigint): (err?: unknown) => void {
    const span = this.child('gateway.admission', this.otel.api.SpanKind.INTERNAL, {
      'gateway.admission.speculative': speculative,
      'gateway.admission.reserved_usd_pico': Number(reserve),
    });
    return (err) => {
      if (err !== undefined) {
        const code = (err as { code?: string }).code ?? 'error';
        span.setAttribute('error.type', code);
        span.setStatus({ code: this.otel.api.SpanStatusCode.ERROR, message: (err as Error).message });
      }
      this.close(span);
    };
  }

  /** One upstream attempt: a CLIENT span whose context the upstream call carries (`inject`). */
  attempt(channel: { name: string; protocol: string }, model: string, operation: string | undefined, n: number): AttemptTrace {
    const provider = PROVIDER_NAMES[channel.protocol] ?? channel.protocol;
    const span = this.child(operation ? `${operation} ${model}` : `upstream ${channel.name}`, this.otel.api.SpanKind.CLIENT, {
      'gen_ai.operation.name': operation,
      'gen_ai.request.model': model,
      'gen_ai.provider.name': provider,
      'gateway.channel': channel.name,
      'gateway.attempt': n,
    });
    return new AttemptTrace(this, span, provider);
  }

  /** @internal */
  endAttempt(trace: AttemptTrace, span: Span, record: TracedAttempt): void {
    if (record.status !== undefined) span.setAttribute('http.response.status_code', record.status);
    span.setAttribute('gateway.attempt.ok', record.ok);
    if (!record.ok) {
      if (record.error) span.setAttribute('gateway.fallback_reason', record.error);
      span.setAttribute('error.type', record.status !== undefined ? String(record.status) : 'upstream_error');
      span.setStatus({ code: this.otel.api.SpanStatusCode.ERROR, message: record.error });
    } else this.provider = trace.provider;
    this.close(span);
  }

  /** @internal */
  inject(span: Span, headers: Record<string, string>): Record<string, string> {
    const out = { ...headers };
    this.otel.propagator.inject(this.otel.api.trace.setSpan(this.context, span), out, headerSetter);
    return out;
  }

  /** The request-log write (queued for the batch writer): a short INTERNAL span. */
  logWrite(): () => void {
    const span = this.child('gateway.log_write', this.otel.api.SpanKind.INTERNAL);
    return () => this.close(span);
  }

  /** The prompt, when the operator opted in to content capture (the body's messages, input or contents). */
  input(json: Record<string, unknown>): void {
    const messages = json.messages ?? json.input ?? json.contents ?? json.prompt;
    if (messages === undefined) return;
    const system = json.system ?? json.instructions ?? json.systemInstruction;
    this.span.setAttribute('gen_ai.input.messages', clip(JSON.stringify(messages)));
    if (system !== undefined) this.span.setAttribute('gen_ai.system_instructions', clip(JSON.stringify(system)));
  }

  /** The completion text, when the operator opted in to content capture. */
  completion(text: string): void {
    this.output = text;
  }

  /** Ends the request span with what the request came to. */
  end(ctx: TracedRequest): void {
    for (const span of this.open) span.end();
    this.open.clear();
    const span = this.span;
    const operation = operationOf(ctx.endpoint, ctx.surface);
    const attrs: Attributes = {
      'http.response.status_code': ctx.status,
      'gateway.request_id': ctx.requestId,
      'gateway.outcome': ctx.outcome,
      'gateway.attempts': ctx.attempts.length,
      'gen_ai.request.stream': ctx.stream,
    };
    if (operation) attrs['gen_ai.operation.name'] = operation;
    if (ctx.modelRequested) attrs['gen_ai.request.model'] = ctx.modelRequested;
    if (ctx.model && ctx.channel) attrs['gen_ai.response.model'] = ctx.model.name;
    if (ctx.channel) attrs['gateway.channel'] = ctx.channel;
    if (this.provider) {
      attrs['gen_ai.provider.name'] = this.provider;
      attrs['gen_ai.system'] = this.provider; // the attribute's name before semantic conventions 1.37
    }
    const u = ctx.charge.usage;
    if (ctx.channel) {
      attrs['gen_ai.usage.input_tokens'] = u.promptTokens + u.cacheReadTokens + u.cacheWriteTokens;
      attrs['gen_ai.usage.output_tokens'] = u.completionTokens;
      if (u.cacheReadTokens) attrs['gen_ai.usage.cache_read.input_tokens'] = u.cacheReadTokens;
      if (u.cacheWriteTokens) attrs['gen_ai.usage.cache_creation.input_tokens'] = u.cacheWriteTokens;
    }
    if (ctx.firstTokenMs !== null) attrs['gateway.first_token_ms'] = ctx.firstTokenMs;
    if (ctx.routeReason) attrs['gateway.route_reason'] = ctx.routeReason;
    if (ctx.errorCode) attrs['error.type'] = ctx.errorCode;
    if (this.output !== undefined)
      attrs['gen_ai.output.messages'] = clip(JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: this.output }] }]));
    span.setAttributes(attrs);
    if (operation && ctx.modelRequested) span.updateName(`${operation} ${ctx.modelRequested}`);
    // As HTTP servers do: an error status for 5xx only; a 4xx is the client's and carries error.type.
    if (ctx.status >= 500) span.setStatus({ code: this.otel.api.SpanStatusCode.ERROR, message: ctx.errorCode ?? undefined });
    span.end();
  }
}

/** One upstream attempt's span. */
export class AttemptTrace {
  private ended = false;

  constructor(
    private readonly request: RequestTrace,
    private readonly span: Span,
    readonly provider: string,
  ) {}

  /** The upstream headers with this attempt's `traceparent` (a copy: the channel's headers are shared). */
  inject(headers: Record<string, string>): Record<string, string> {
    return this.request.inject(this.span, headers);
  }

  end(record: TracedAttempt): void {
    if (this.ended) return;
    this.ended = true;
    this.request.endAttempt(this, this.span, record);
  }
}

function clip(text: string): string {
  return text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…` : text;
}

/**
 * The request's span (`route`: the endpoint as metrics label it), a child of the client's `traceparent` when it sent one; undefined when
 * tracing is off (the only cost then).
 */
export function startRequestTrace(method: string, route: string, path: string, headers: Record<string, string | undefined>): RequestTrace | undefined {
  const otel = state.otel;
  if (!otel) return undefined;
  const api = otel.api;
  const parent = otel.propagationHeaders.some((h) => headers[h] !== undefined)
    ? otel.propagator.extract(api.ROOT_CONTEXT, headers, headerGetter)
    : api.ROOT_CONTEXT;
  const span = otel.tracer.startSpan(
    // Named by its route ('other' for unknown paths: anyone can send any path), renamed `{operation} {model}` at the end.
    `${method} ${route}`,
    { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } },
    parent,
  );
  return new RequestTrace(otel, span, parent);
}
