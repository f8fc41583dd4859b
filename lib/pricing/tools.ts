// Built-in (server) tools that an upstream runs and bills per call on top of tokens: web search on
// OpenAI's Responses API and Anthropic's Messages API, code execution, file search, image generation.
// The operator's config prices them per thousand calls (`tool_prices_usd_per_thousand_calls`); a
// request using one that has no price for its model is refused rather than served at the operator's
// expense. Money is pico-USD, as everywhere in lib/billing.

export const BUILT_IN_TOOLS = ['web_search', 'web_fetch', 'file_search', 'code_interpreter', 'code_execution', 'image_generation'] as const;
export type BuiltInTool = (typeof BUILT_IN_TOOLS)[number];

/** Pico-USD per call of each priced tool. */
export type ToolPrices = Partial<Record<BuiltInTool, bigint>>;
/** Calls of each tool (as an upstream reported or a request allows). */
export type ToolCalls = Partial<Record<BuiltInTool, number>>;

/** USD per thousand calls (a decimal text of at most 9 decimals) -> pico-USD per call, exactly. */
export function perCallPrice(usdPerThousand: bigint): bigint {
  return usdPerThousand / 1000n;
}

/**
 * The built-in tool a request's tool `type` names, if it is one billed per call: Responses types
 * (`web_search`, `web_search_preview`, dated variants, `code_interpreter`, `file_search`,
 * `image_generation`) and Anthropic's versioned server tools (`web_search_20250305`,
 * `web_fetch_20250910`, `code_execution_20250825`).
 */
export function builtInToolOf(type: string): BuiltInTool | undefined {
  if (type.startsWith('web_search')) return 'web_search';
  if (type.startsWith('web_fetch')) return 'web_fetch';
  if (type.startsWith('code_execution')) return 'code_execution';
  if (type === 'code_interpreter') return 'code_interpreter';
  if (type === 'file_search') return 'file_search';
  if (type === 'image_generation') return 'image_generation';
  return undefined;
}

/** The fee of `calls`, each tool's count capped at `allowed` (what was reserved): pico-USD. */
export function toolFee(prices: ToolPrices, calls: ToolCalls, allowed: ToolCalls): { cost: bigint; billed: ToolCalls } {
  let cost = 0n;
  const billed: ToolCalls = {};
  for (const tool of BUILT_IN_TOOLS) {
    const n = Math.min(calls[tool] ?? 0, allowed[tool] ?? 0);
    if (n <= 0) continue;
    billed[tool] = n;
    cost += BigInt(n) * (prices[tool] ?? 0n);
  }
  return { cost, billed };
}
