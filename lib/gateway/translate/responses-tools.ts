// The Responses API's tool kinds over Chat Completions function tools, and back. Codex CLI sends
// `namespace` tools (a group of functions), `custom` free-form tools (one string input, often with a
// grammar), `local_shell` and hosted tools (`web_search`). Chat upstreams know only functions:
// namespaced functions are flattened under a name every protocol accepts, free-form tools become a
// function of one string argument, and the model's calls are written back as the item kind the
// client declared (`function_call` with its `namespace`, `custom_tool_call`, `local_shell_call`).
import { isObject } from '@/lib/gateway/translate/wire/json';
import { createHash } from 'node:crypto';
import { invalidParam } from '@/lib/gateway/translate/openai-client';
import type { JsonObject } from '@/lib/gateway/translate/types';

/** Tool types only OpenAI's own service runs (a native Responses channel serves them). */
export const HOSTED_TOOL_TYPES = new Set([
  'web_search',
  'web_search_preview',
  'web_search_2025_08_26',
  'web_search_preview_2025_03_11',
  'file_search',
  'computer_use_preview',
  'computer_use',
  'code_interpreter',
  'image_generation',
  'mcp',
  'tool_search',
]);

/** What a chat function the gateway declared stands for on the client's side. */
export type ClientTool = { kind: 'function'; name: string; namespace?: string } | { kind: 'custom'; name: string } | { kind: 'local_shell'; name: string };

/**
 * The function names every upstream protocol accepts: OpenAI and Anthropic take
 * `[a-zA-Z0-9_-]{1,64}`, Gemini also wants a letter or underscore first.
 */
const PORTABLE_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

/** The chat function name of `name` in `namespace`: `<namespace>__<name>`, or a hashed form when that is not portable. */
export function flatName(namespace: string, name: string): string {
  const plain = `${namespace}__${name}`;
  if (PORTABLE_NAME.test(plain)) return plain;
  const hash = createHash('sha256').update(`${namespace}\0${name}`).digest('hex').slice(0, 10);
  const stem = plain.replace(/[^a-zA-Z0-9_-]/g, '_').replace(/^[^a-zA-Z_]/, '_');
  return `${stem.slice(0, 52)}_${hash}`;
}

/** The function local_shell becomes: Codex's exec action as arguments. */
const LOCAL_SHELL_NAME = 'local_shell';
const LOCAL_SHELL_PARAMETERS = {
  type: 'object',
  properties: {
    command: { type: 'array', items: { type: 'string' }, description: 'The command and its arguments, e.g. ["bash", "-lc", "ls"].' },
    working_directory: { type: 'string', description: 'The directory to run the command in.' },
    timeout_ms: { type: 'number', description: 'Time limit in milliseconds.' },
  },
  required: ['command'],
};

/** The parameters of a free-form tool's function: one string, the grammar (if any) in its description. */
function customParameters(tool: JsonObject): JsonObject {
  const format = isObject(tool.format) ? tool.format : undefined;
  let description = 'The raw input of the tool, as free-form text (not JSON).';
  if (format?.type === 'grammar' && typeof format.definition === 'string') {
    description += ` It must follow this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}`;
  }
  return { type: 'object', properties: { input: { type: 'string', description } }, required: ['input'], additionalProperties: false };
}

/** The Responses tools as chat tools, with the map back to the client's tools and what was left out. */
export interface ToolPlan {
  tools: JsonObject[];
  /** Chat function name -> the client's tool. */
  byChatName: Map<string, ClientTool>;
  /** Hosted tool types in the request (run only by a native channel; dropped elsewhere). */
  hosted: string[];
}

function chatFunction(tool: JsonObject, at: string, name: string, description?: string): JsonObject {
  if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters))
    throw invalidParam(`${at}.parameters`, `\`${at}.parameters\` must be a JSON Schema object.`);
  const fn: JsonObject = { name };
  const text = [description, typeof tool.description === 'string' ? tool.description : ''].filter(Boolean).join('\n\n');
  if (text !== '') fn.description = text;
  if (isObject(tool.parameters)) fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

const nonEmptyName = (v: unknown, at: string): string => {
  if (typeof v !== 'string' || v === '') throw invalidParam(`${at}.name`, `\`${at}.name\` must be a non-empty string.`);
  return v;
};

export function toolPlanOf(tools: unknown): ToolPlan {
  const plan: ToolPlan = { tools: [], byChatName: new Map(), hosted: [] };
  if (tools === undefined || tools === null) return plan;
  if (!Array.isArray(tools)) throw invalidParam('tools', '`tools` must be an array.');
  const add = (chat: JsonObject, client: ClientTool) => {
    plan.tools.push(chat);
    plan.byChatName.set(isObject(chat.function) ? String(chat.function.name) : '', client);
  };
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalidParam(at, `\`${at}\` must be an object.`);
    const type = tool.type;
    if (type === 'function') {
      const name = nonEmptyName(tool.name, at);
      add(chatFunction(tool, at, name), { kind: 'function', name });
    } else if (type === 'namespace') {
      const namespace = nonEmptyName(tool.name, at);
      if (!Array.isArray(tool.tools)) throw invalidParam(`${at}.tools`, `\`${at}.tools\` must be an array of function tools.`);
      const nsDescription = typeof tool.description === 'string' && tool.description !== '' ? `(${namespace}: ${tool.description})` : undefined;
      tool.tools.forEach((inner, j) => {
        const innerAt = `${at}.tools[${j}]`;
        if (!isObject(inner) || inner.type !== 'function')
          throw invalidParam(`${innerAt}.type`, `\`${innerAt}\` must be a function tool: a namespace holds functions only.`);
        const name = nonEmptyName(inner.name, innerAt);
        add(chatFunction(inner, innerAt, flatName(namespace, name), nsDescription), { kind: 'function', name, namespace });
      });
    } else if (type === 'custom') {
      const name = nonEmptyName(tool.name, at);
      add(chatFunction({ ...tool, parameters: customParameters(tool) }, at, name), { kind: 'custom', name });
    } else if (type === 'local_shell') {
      add(chatFunction({ description: 'Runs a command on the user’s machine.', parameters: LOCAL_SHELL_PARAMETERS }, at, LOCAL_SHELL_NAME), {
        kind: 'local_shell',
        name: LOCAL_SHELL_NAME,
      });
    } else if (typeof type === 'string' && HOSTED_TOOL_TYPES.has(type)) {
      if (!plan.hosted.includes(type)) plan.hosted.push(type);
    } else {
      throw invalidParam(`${at}.type`, `Tool type ${JSON.stringify(type)} (\`${at}.type\`) is not supported by this gateway.`);
    }
  });
  return plan;
}

/**
 * The chat tool_choice. A choice that forces a hosted tool cannot be served without it: the 400
 * naming it is `forcedHosted` (the surface raises it where no native channel serves the request).
 */
export function chatToolChoiceOf(choice: unknown): { choice?: unknown; forcedHosted?: string } {
  if (choice === undefined || choice === null) return {};
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { choice };
  if (isObject(choice)) {
    if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') {
      const name = typeof choice.namespace === 'string' ? flatName(choice.namespace, choice.name) : choice.name;
      return { choice: { type: 'function', function: { name } } };
    }
    if (choice.type === 'local_shell') return { choice: { type: 'function', function: { name: LOCAL_SHELL_NAME } } };
    if (typeof choice.type === 'string' && HOSTED_TOOL_TYPES.has(choice.type)) return { forcedHosted: choice.type };
    if (choice.type === 'allowed_tools' && (choice.mode === 'auto' || choice.mode === 'required')) return { choice: choice.mode };
  }
  throw invalidParam('tool_choice', '`tool_choice` must be "auto", "none", "required" or {type: "function", name}.');
}

/** A tool call the model made, as the chat reply carries it. */
export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

function parsedArguments(args: string): JsonObject {
  try {
    const v: unknown = JSON.parse(args);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** The item kind a chat tool call is answered as, and its fields besides id/status. */
export function clientCallItem(call: ChatToolCall, byChatName: Map<string, ClientTool> | undefined): JsonObject {
  const tool = byChatName?.get(call.name);
  if (tool?.kind === 'custom') {
    const input = parsedArguments(call.arguments).input;
    return { type: 'custom_tool_call', call_id: call.id, name: tool.name, input: typeof input === 'string' ? input : call.arguments };
  }
  if (tool?.kind === 'local_shell') {
    const args = parsedArguments(call.arguments);
    const command = Array.isArray(args.command) ? args.command.map(String) : typeof args.command === 'string' ? ['bash', '-lc', args.command] : [];
    return {
      type: 'local_shell_call',
      call_id: call.id,
      action: {
        type: 'exec',
        command,
        timeout_ms: typeof args.timeout_ms === 'number' ? args.timeout_ms : null,
        working_directory: typeof args.working_directory === 'string' ? args.working_directory : null,
        env: {},
        user: null,
      },
    };
  }
  const item: JsonObject = { type: 'function_call', call_id: call.id, name: tool?.name ?? call.name, arguments: call.arguments };
  if (tool?.kind === 'function' && tool.namespace) item.namespace = tool.namespace;
  return item;
}

/** Item id prefixes of each call kind (as OpenAI mints them). */
export const CALL_ID_PREFIX: Record<string, string> = { function_call: 'fc', custom_tool_call: 'ctc', local_shell_call: 'lsh' };

/** A chat assistant tool call for a replayed call item of the client's (function, namespaced, custom, local shell). */
export function chatCallOfItem(item: JsonObject, at: string): JsonObject {
  // A local shell call may carry only its item `id` (Codex's LocalShellCall has `call_id` optional).
  const callId = item.call_id ?? (item.type === 'local_shell_call' ? item.id : undefined);
  if (typeof callId !== 'string' || callId === '') throw invalidParam(`${at}.call_id`, `\`${at}.call_id\` must be a non-empty string.`);
  const call = (name: string, args: string) => ({ id: callId, type: 'function', function: { name, arguments: args } });
  switch (item.type) {
    case 'custom_tool_call': {
      const name = nonEmptyName(item.name, at);
      if (typeof item.input !== 'string') throw invalidParam(`${at}.input`, `\`${at}.input\` must be a string.`);
      return call(name, JSON.stringify({ input: item.input }));
    }
    case 'local_shell_call': {
      const action = isObject(item.action) ? item.action : {};
      const args: JsonObject = { command: Array.isArray(action.command) ? action.command : [] };
      if (typeof action.working_directory === 'string') args.working_directory = action.working_directory;
      if (typeof action.timeout_ms === 'number') args.timeout_ms = action.timeout_ms;
      return call(LOCAL_SHELL_NAME, JSON.stringify(args));
    }
    default: {
      const name = nonEmptyName(item.name, at);
      if (typeof item.arguments !== 'string') throw invalidParam(`${at}.arguments`, `\`${at}.arguments\` must be a JSON object encoded as a string.`);
      return call(typeof item.namespace === 'string' && item.namespace !== '' ? flatName(item.namespace, name) : name, item.arguments);
    }
  }
}
