import { request } from 'undici';
import type { ChannelInfo, GatewayConfig } from '@/lib/config';

// A tiny real request through one channel (the console's "test" button and the re-enable probe):
// one output token of the channel's first chat model, or a one-word embedding.

export interface ProbeResult {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  model: string | null;
  /** Short, upstream-safe: the status line or the error class, never the channel's key. */
  detail: string;
}

const ANTHROPIC_VERSION = '2023-06-01';

export async function probeChannel(channel: ChannelInfo, cfg: GatewayConfig, timeoutMs = 10_000): Promise<ProbeResult> {
  const models = channel.models.map((m) => cfg.models.get(m)).filter((m) => m !== undefined);
  const chat = models.find((m) => m.kind === 'chat');
  const model = chat ?? models[0];
  if (!model) return { ok: false, status: null, latencyMs: 0, model: null, detail: 'the channel serves no model of the catalogue' };
  let path: string;
  let body: unknown;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (channel.protocol === 'anthropic') {
    path = '/v1/messages';
    body = { model: model.name, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] };
    headers['x-api-key'] = channel.apiKey;
    headers['anthropic-version'] = ANTHROPIC_VERSION;
  } else {
    headers.authorization = `Bearer ${channel.apiKey}`;
    if (model.kind === 'chat') {
      path = '/chat/completions';
      body = { model: model.name, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] };
    } else {
      path = '/embeddings';
      body = { model: model.name, input: 'ping', encoding_format: 'float' };
    }
  }
  const started = performance.now();
  try {
    const res = await request(`${channel.baseUrl.replace(/\/$/, '')}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.body.text();
    const latencyMs = Math.round(performance.now() - started);
    let parsed = false;
    try {
      JSON.parse(text);
      parsed = true;
    } catch {
      /* not JSON */
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300 && parsed;
    return { ok, status: res.statusCode, latencyMs, model: model.name, detail: ok ? 'ok' : `HTTP ${res.statusCode}${parsed ? '' : ', reply is not JSON'}` };
  } catch (err) {
    const name = (err as { code?: string; name?: string }).code ?? (err as Error).name ?? 'error';
    return { ok: false, status: null, latencyMs: Math.round(performance.now() - started), model: model.name, detail: `request failed (${name})` };
  }
}
