import type { ChannelInfo, GatewayConfig } from '@/lib/config';
import type { JsonBody, JsonObject } from '@/lib/gateway/body';
import { providers } from '@/lib/gateway/providers';
import { chatTranslators } from '@/lib/gateway/translate';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import { classify, readUpstreamBody } from '@/lib/gateway/upstream';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { callChannel } from '@/lib/gateway/call-channel';
import type { ProbeResult } from '@/lib/channels/prober';

export type { ProbeResult };

// A tiny real request through one channel (the console's "test" button and the re-enable probe):
// one output token of the channel's first chat model, or a one-word embedding.

// It goes through the same door as traffic (callChannel, lib/gateway/call-channel.ts): the
// channel's keep-alive pool, its connect / first-byte / idle timeouts, and the same classification
// of its answer (a rate limit, the channel's key refused, the caller's error). Its caller records
// the result in the channel's health (no attempt tracker).

/** A probe's reply is one token or one small vector: a larger one is not read on (a hostile upstream's flood). */
const PROBE_REPLY_BYTES = 1024 * 1024;

/** A JSON body as a surface would have read it, for a translator. */
function jsonBody(json: JsonObject): JsonBody {
  const text = JSON.stringify(json);
  return { raw: Buffer.from(text), text, json, verbatim: true };
}

export async function probeChannel(channel: ChannelInfo, cfg: GatewayConfig, timeoutMs = 10_000): Promise<ProbeResult> {
  const models = channel.models.map((m) => cfg.models.get(m)).filter((m) => m !== undefined);
  const chat = models.find((m) => m.kind === 'chat');
  // A video model is never probed (its API is a job's, lib/videos): a chat or embedding model is.
  const model = chat ?? models.find((m) => m.kind === 'embedding');
  if (!model) return { ok: false, status: null, latencyMs: 0, model: null, detail: 'the channel serves no chat or embedding model of the catalogue' };
  const provider = providers[channel.protocol];
  // The probe speaks OpenAI chat (or embeddings) and goes through the same translator as a client's
  // request would: the channel is tested in its own protocol, with its own auth header.
  const op = model.kind === 'chat' ? 'chat' : 'embeddings';
  const path = provider.path(op, model.name, false);
  const translator = op === 'chat' ? chatTranslators.openai[channel.protocol] : channel.protocol === 'openai' ? openaiToOpenai : undefined;
  if (!path || !translator)
    return { ok: false, status: null, latencyMs: 0, model: model.name, detail: `${channel.protocol} channels do not serve ${model.kind} models` };
  const probe =
    op === 'chat'
      ? { model: model.name, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] }
      : { model: model.name, input: 'ping', encoding_format: 'float' };
  const call = translator.request(
    { body: jsonBody(probe), headers: {} },
    { model, stream: false, requestId: `probe_${Date.now().toString(36)}`, created: Math.floor(Date.now() / 1000) },
  );
  const headers: Record<string, string> = { 'content-type': 'application/json', ...call.headers, ...provider.auth(channel.apiKey) };
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const outcome = await callChannel({
      channel,
      provider,
      path,
      body: call.body,
      headers,
      signal: AbortSignal.timeout(timeoutMs),
      forbiddenIsCallers: call.forbiddenIsCallers,
    });
    if (outcome.kind === 'failed') {
      if (outcome.status === undefined) throw outcome.cause;
      return { ok: false, status: outcome.status, latencyMs: ms(), model: model.name, detail: `HTTP ${outcome.status}` };
    }
    if (outcome.kind === 'rejected') {
      return {
        ok: false,
        status: outcome.status,
        latencyMs: ms(),
        model: model.name,
        detail: `HTTP ${outcome.status}${isJson(outcome.text) ? '' : ', reply is not JSON'}`,
      };
    }
    const res = outcome.res;
    const text = await readUpstreamBody(res.body, PROBE_REPLY_BYTES);
    const latencyMs = ms();
    const parsed = isJson(text);
    const ok = res.status >= 200 && res.status < 300 && parsed;
    return { ok, status: res.status, latencyMs, model: model.name, detail: ok ? 'ok' : `HTTP ${res.status}${parsed ? '' : ', reply is not JSON'}` };
  } catch (err) {
    const failure = classify(err);
    const name = failure instanceof UpstreamFailure ? failure.kind : ((err as { code?: string; name?: string }).code ?? (err as Error).name ?? 'error');
    return { ok: false, status: null, latencyMs: ms(), model: model.name, detail: `request failed (${name})` };
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
