// The GenAI metrics of the OpenTelemetry semantic conventions, in Prometheus naming
// (gen_ai.client.token.usage -> gen_ai_client_token_usage; the time ones in seconds), per model and
// channel: recorded once per served request when it ends (finish in lib/gateway/context.ts).
import { observe } from '@/lib/metrics';

/** What the metrics read of a request that ended (a structural view of its record, lib/gateway/record.ts). */
export interface MeteredRequest {
  readonly endpoint: string;
  readonly stream: boolean;
  readonly status: number;
  readonly model?: { name: string };
  readonly channel: string | null;
  readonly charge: { readonly usage: { promptTokens: number; completionTokens: number; cacheReadTokens: number; cacheWriteTokens: number } };
  readonly firstTokenMs: number | null;
}

/** `latencyMs`: the request's whole time (its log row's). */
export function observeGenAi(r: MeteredRequest, latencyMs: number): void {
  const channel = r.channel;
  // Nothing was served (no model answered), or the upstream refused the request (its error passed through: no tokens).
  if (!channel || !r.model || r.status >= 400) return;
  const model = r.model.name;
  const u = r.charge.usage;
  const input = u.promptTokens + u.cacheReadTokens + u.cacheWriteTokens;
  observe('gen_ai_client_token_usage', { gen_ai_token_type: 'input', gen_ai_response_model: model, channel }, input);
  if (r.endpoint !== '/v1/embeddings')
    observe('gen_ai_client_token_usage', { gen_ai_token_type: 'output', gen_ai_response_model: model, channel }, u.completionTokens);
  // Time to first token and per output token are a stream's (a whole reply's first token is its last).
  if (!r.stream || r.firstTokenMs === null) return;
  observe('gen_ai_server_time_to_first_token_seconds', { gen_ai_response_model: model, channel }, r.firstTokenMs / 1000);
  if (u.completionTokens > 1) {
    const perToken = Math.max(0, latencyMs - r.firstTokenMs) / 1000 / (u.completionTokens - 1);
    observe('gen_ai_server_time_per_output_token_seconds', { gen_ai_response_model: model, channel }, perToken);
  }
}
