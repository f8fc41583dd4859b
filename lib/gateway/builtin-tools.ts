// The built-in tools of a request that its upstream bills per call (lib/billing/tools.ts): found in
// the body's `tools`, checked against the model's prices, reserved at admission, billed from the
// calls the reply reports.
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { builtInToolOf, BUILT_IN_TOOLS, type BuiltInTool, type ToolCalls } from '@/lib/billing/tools';
import { GatewayError } from '@/lib/errors';
import type { JsonObject } from '@/lib/gateway/body';

/**
 * Calls of a tool reserved (and at most billed) when the request sets no limit: a web search turn
 * makes a few searches; code runs in one container per reply (code_interpreter, code_execution are
 * priced per container). Lower with Anthropic's per-tool `max_uses` or the Responses API's
 * `max_tool_calls`; a reply that reports more calls is billed the reserved number (noted in the log).
 */
const DEFAULT_CALLS: Record<BuiltInTool, number> = {
  web_search: 10,
  web_fetch: 10,
  file_search: 10,
  image_generation: 4,
  code_interpreter: 1,
  code_execution: 1,
};

export interface BuiltInToolUse {
  tool: BuiltInTool;
  /** The tool's `type` as the client wrote it (named in a refusal). */
  type: string;
  /** Where it is in the body (`tools[2].type`, or `tools.2.type` on the Anthropic mirror). */
  param: string;
  /** Calls reserved and billed at most. */
  calls: number;
}

/**
 * The per-call-billed tools of `body.tools`. `perTool`: the field of a tool that limits its calls
 * (Anthropic's `max_uses`); `overall`: a limit on all built-in calls (Responses' `max_tool_calls`).
 */
export function builtInToolsOf(body: JsonObject, paramOf: (i: number) => string, perTool?: string, overall?: unknown): BuiltInToolUse[] {
  const tools = body.tools;
  if (!Array.isArray(tools)) return [];
  const found: BuiltInToolUse[] = [];
  const cap = typeof overall === 'number' && Number.isInteger(overall) && overall >= 0 ? overall : Infinity;
  tools.forEach((t: unknown, i) => {
    if (!isObject(t) || typeof t.type !== 'string') return;
    const type = t.type;
    const tool = builtInToolOf(type);
    if (!tool) return;
    const limit = perTool ? t[perTool] : undefined;
    let calls = Math.min(DEFAULT_CALLS[tool], cap);
    if (typeof limit === 'number' && Number.isInteger(limit) && limit >= 0) calls = Math.min(limit, cap);
    const same = found.find((f) => f.tool === tool);
    if (same) same.calls = Math.max(same.calls, calls);
    else found.push({ tool, type, param: paramOf(i), calls });
  });
  return found;
}

/** A model can serve the tools when each has a price for it. */
export function pricedFor(model: ModelInfo, tools: BuiltInToolUse[]): boolean {
  return tools.every((t) => model.toolPrices[t.tool] !== undefined);
}

/** The refusal of a tool without a price for `model`: the operator would pay its fee. */
export function unpricedTool(model: ModelInfo, tools: BuiltInToolUse[]): GatewayError | undefined {
  const t = tools.find((u) => model.toolPrices[u.tool] === undefined);
  if (!t) return undefined;
  return new GatewayError('invalid_request', `The built-in tool "${t.type}" is not available for ${model.name} on this gateway (it has no price).`, {
    param: t.param,
  });
}

/** The most the tools can cost on `model`: every reserved call at its price (pico-USD). */
export function toolReservation(model: ModelInfo, tools: BuiltInToolUse[]): bigint {
  let total = 0n;
  for (const t of tools) total += BigInt(t.calls) * (model.toolPrices[t.tool] ?? 0n);
  return total;
}

/** The calls a request allows, per tool. */
export function allowedCalls(tools: BuiltInToolUse[]): ToolCalls {
  const out: ToolCalls = {};
  for (const t of tools) out[t.tool] = t.calls;
  return out;
}

/** Adds `more` into `acc` (a stream's running count), keeping each tool's larger count. */
export function maxCalls(acc: ToolCalls | undefined, more: ToolCalls): ToolCalls {
  const out: ToolCalls = { ...acc };
  for (const tool of BUILT_IN_TOOLS) {
    const n = more[tool];
    if (n !== undefined && n > (out[tool] ?? 0)) out[tool] = n;
  }
  return out;
}
