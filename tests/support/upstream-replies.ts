// One small fixture set per upstream protocol: the same semantic replies (a plain text answer, a
// stream cut by an error event after some text) as each protocol writes them, recorded
// (tests/fixtures/<protocol>), with what a translator must read from them. The client-surface
// tables (tests/unit/translate-client-tables.test.ts) feed every upstream's set to every surface.
import type { UpstreamProtocol, UpstreamUsage } from '@/lib/gateway/translate/types';
import { fixture } from './sse-fixtures';

export interface UpstreamReplies {
  /** The plain text answer, whole and streamed. */
  text: {
    whole: string;
    stream: string;
    content: string;
    /** The usage read from the whole reply and from the complete stream. */
    usage: UpstreamUsage;
    /** The text fragments of the stream, one per upstream event that carries text. */
    deltas: string[];
    /** The usage read after the stream's first event only (null: none reported yet). */
    usageAfterFirst: Partial<UpstreamUsage> | null;
  };
  /** A stream that ends with an error event after some text. */
  errorMidStream: {
    stream: string;
    /** The text fragments before the error event. */
    deltas: string[];
    /** The status the error event names (OpenAI's names none): the attempt's failure status. */
    status?: number;
    /** A piece of the error event's own words, kept in the failure's message. */
    says: string;
    /** The usage read before the error event. */
    usageBefore: Partial<UpstreamUsage> | null;
  };
}

const usage = (promptTokens: number, completionTokens: number, reasoningTokens = 0): UpstreamUsage => ({
  promptTokens,
  completionTokens,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens,
  completionFinal: true,
});

const HELLO = 'Hello! How can I help you today?';

export const upstreamReplies: Record<UpstreamProtocol, UpstreamReplies> = {
  openai: {
    text: {
      whole: fixture('openai/reply-text.json'),
      stream: fixture('openai/stream-text.sse'),
      content: HELLO,
      usage: usage(19, 10),
      deltas: ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'],
      usageAfterFirst: null,
    },
    errorMidStream: {
      stream: fixture('openai/stream-error.sse'),
      deltas: ['The', ' answer', ' is'],
      says: 'server_error',
      usageBefore: null,
    },
  },
  anthropic: {
    text: {
      whole: fixture('anthropic/text.json'),
      stream: fixture('anthropic/text.sse'),
      content: HELLO,
      usage: usage(21, 12),
      deltas: ['Hello', '! How can I help', ' you today?'],
      usageAfterFirst: { promptTokens: 21, completionTokens: 1, completionFinal: false },
    },
    errorMidStream: {
      stream: fixture('anthropic/error.sse'),
      deltas: ['Once upon a time'],
      status: 529,
      says: 'overloaded_error',
      usageBefore: { promptTokens: 21, completionFinal: false },
    },
  },
  gemini: {
    text: {
      // Thoughts the model spent count as output (and reasoning) tokens.
      whole: fixture('gemini/reply-text.json'),
      stream: fixture('gemini/stream-text.sse'),
      content: HELLO,
      usage: usage(7, 33, 24),
      deltas: ['Hello', '! How can I help', ' you today?'],
      usageAfterFirst: { promptTokens: 7, completionFinal: false },
    },
    errorMidStream: {
      stream: fixture('gemini/stream-error.sse'),
      deltas: ['The answer', ' is'],
      status: 503,
      says: 'UNAVAILABLE',
      // Cut before the finishReason: the output count may still grow, so the pipeline estimates it.
      usageBefore: { ...usage(9, 12, 12), completionFinal: false },
    },
  },
};
