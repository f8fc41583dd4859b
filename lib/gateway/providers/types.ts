// The protocol names come from the config: providers sit below the translators, which use their operations.
import type { UpstreamProtocolName as UpstreamProtocol } from '@/lib/config';

/** What the pipeline asks an upstream to do. */
export type Operation = 'chat' | 'embeddings' | 'count_tokens' | 'responses' | 'responses_compact';

/**
 * An upstream protocol as data: where each operation lives under a channel's base URL, how the
 * channel's key is sent, and how its error bodies name the failure. The pipeline reads these and
 * never branches on a protocol's name.
 */
export interface Provider {
  readonly protocol: UpstreamProtocol;
  /** The path of an operation after the channel's base URL; undefined when the protocol has none. */
  path(op: Operation, model: string, stream: boolean): string | undefined;
  /** The headers that carry the channel's key (the caller's key never goes upstream). */
  auth(apiKey: string): Record<string, string>;
  /** The message of an error body, for the attempt's log record (never shown to the client as is). */
  errorMessage(body: unknown): string | undefined;
  /**
   * A 4xx (other than 401/403, always the channel's) that says the channel's own key was refused
   * or the operator's account at the upstream cannot pay (out of credit or quota, billing not set
   * up): the channel's failure, so the next channel is tried and the breaker counts it, never the
   * caller's error (nor its message shown to the caller). Asked of 429s too: a plain rate limit is
   * not the channel's failure, an exhausted quota is.
   */
  keyRefused?(status: number, body: string): boolean;
}

/** `{"error": {"message": …}}`: how OpenAI, Anthropic and Google all carry an error's message. */
export function nestedErrorMessage(body: unknown): string | undefined {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === 'string' ? error.message : undefined;
}
