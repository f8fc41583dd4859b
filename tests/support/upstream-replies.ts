// One small fixture set per upstream protocol: the same semantic replies (a plain text answer, two
// parallel tool calls, a reply stopped by the output limit, a stream cut by an error event after
// some text) as each protocol writes them, recorded
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
  /** Two parallel calls of one function, whole and streamed (and the calls as the client must get them). */
  tools: { whole: string; stream: string; calls: { name: string; args: Record<string, unknown> }[] };
  /** The plain text reply (`text.whole`) stopped by the output limit. */
  maxTokens: string;
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

/** `text` with `edit` applied to its parsed JSON. */
function edited(text: string, edit: (reply: Record<string, any>) => void): string {
  const reply = JSON.parse(text) as Record<string, any>;
  edit(reply);
  return JSON.stringify(reply);
}

const weatherIn = (key: string, ...places: string[]) => places.map((p) => ({ name: 'get_weather', args: { [key]: p, unit: 'celsius' } }));

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
    tools: { whole: fixture('openai/reply-tools.json'), stream: fixture('openai/stream-tools.sse'), calls: weatherIn('city', 'Paris', 'Tokyo') },
    maxTokens: edited(fixture('openai/reply-text.json'), (r) => (r.choices[0].finish_reason = 'length')),
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
    tools: {
      whole: fixture('anthropic/tools.json'),
      stream: fixture('anthropic/tools.sse'),
      calls: weatherIn('location', 'San Francisco, CA', 'New York, NY'),
    },
    maxTokens: edited(fixture('anthropic/text.json'), (r) => (r.stop_reason = 'max_tokens')),
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
    tools: { whole: fixture('gemini/reply-tools.json'), stream: fixture('gemini/stream-tools.sse'), calls: weatherIn('city', 'Paris', 'Tokyo') },
    maxTokens: edited(fixture('gemini/reply-text.json'), (r) => (r.candidates[0].finishReason = 'MAX_TOKENS')),
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
