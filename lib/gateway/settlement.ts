// The settlement of one request: its usage priced once, after the relay, into an immutable Charge
// that the translator (the reply's own cost fields), the headers, the stream trailers, the limits'
// release and the log row all read. Nothing is priced or formatted again after it.
import type { ModelInfo } from '@/lib/config';
import { breakdownOf, cnyOf, noUsage, type Usage } from '@/lib/billing/cost';
import { storedBreakdown, type Adjustment, type CallLine, type StoredBreakdown, type UsageClass } from '@/lib/pricing/breakdown';
import { hitCost } from '@/lib/gateway/response-cache';
import { BUILT_IN_TOOLS, type ToolCalls } from '@/lib/pricing/tools';
import { formatPico } from '@/lib/money';
import { inc } from '@/lib/metrics';
import { log } from '@/lib/log';
import type { BillingNote } from '@/lib/gateway/call-channel';

/** The output tokens reserved (and billed at most) for `model`: the client's cap (else the model's maximum) for each completion. */
export function outputTokensOf(model: ModelInfo, asked: { maxOutputTokens?: number; choices: number }): number {
  if (model.kind !== 'chat') return 0;
  return Math.min(asked.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens) * asked.choices;
}

/** The header (and stream trailer) naming the usage classes a request reported without a price of their own. */
export const UNPRICED_HEADER = 'x-service-unpriced';

/** The per-call fee of a reply's built-in tool calls (lib/billing/tools.ts). */
export interface ToolFee {
  cost: bigint;
  billed: ToolCalls;
  reported: ToolCalls;
}

/** A request's charge: what it used, what that costs and how the cost was made. Frozen. */
export interface Charge {
  readonly usage: Usage;
  readonly cost: bigint;
  readonly costCny: bigint;
  /** The costs as exact decimal text (headers, trailers, the reply's own cost fields). */
  readonly costUsd: string;
  readonly costCnyText: string;
  /** Usage classes the model has no price of its own for (x-service-unpriced), and their header text ('' when none). */
  readonly unpriced: readonly UsageClass[];
  readonly unpricedText: string;
  /** How `cost` was made: stored with the log row (docs/decisions/043). */
  readonly breakdown: StoredBreakdown | null;
  /** The note for the serving attempt's `billing`, when beyond plain token prices (capped, tool calls, unpriced). */
  readonly note: BillingNote | undefined;
}

/** Nothing used, nothing charged: every request's charge until it settles. */
export const NO_CHARGE: Charge = Object.freeze({
  usage: Object.freeze(noUsage()),
  cost: 0n,
  costCny: 0n,
  costUsd: formatPico(0n),
  costCnyText: formatPico(0n),
  unpriced: [],
  unpricedText: '',
  breakdown: null,
  note: undefined,
});

/** What a charge is made from. */
export interface ChargeInput {
  requestId: string;
  model: ModelInfo | undefined;
  usage: Usage;
  /** The output cap the reservation assumed: a report beyond it is billed at it. */
  maxCompletion?: number;
  tools?: ToolFee;
  /** The balance reserved at admission (null: none); no charge exceeds it. */
  reserved: bigint | null;
  /** Answered from the response cache: billed at this fraction (billionths). */
  cacheHitBilledNano: bigint | null;
  /** A batch line's discount (percent) for the model. */
  batchPercent?: number;
  cnyRateNano: bigint;
}

/**
 * Prices the usage with the model that actually served, never above what was reserved: the
 * completion at most `maxCompletion` tokens (the output cap the reservation assumed), the whole
 * charge at most the reservation. Admission checked the reservation against the balance and the
 * key's budget, so no upstream report (4,096 tokens for `max_tokens: 1`, 1e300) can take either
 * past its limit. A capped report is counted in /metrics and noted on the serving attempt of the
 * request log (`billing`). The cost of prompt tokens the body's size does not bound (media fetched
 * by URL) is, by the same rule, at most the reservation.
 */
export function settleCharge(input: ChargeInput): Charge {
  const { model, reserved } = input;
  let usage = input.usage;
  const reported = usage.completionTokens;
  if (input.maxCompletion !== undefined && reported > input.maxCompletion) usage = { ...usage, completionTokens: input.maxCompletion };
  // Every step from the priced lines to the charge is recorded as it is applied (the log's breakdown).
  const breakdown = model ? breakdownOf(model, usage) : null;
  let priced = breakdown?.costUsd ?? 0n;
  const unpriced = breakdown?.unpriced ?? [];
  let note: BillingNote | undefined;
  const addNote = (n: BillingNote) => (note = { ...note, ...n });
  if (unpriced.length) {
    // Usage the price list cannot price exactly: never silent (a warning, a metric, the log row's note, a header).
    addNote({ unpriced });
    for (const c of unpriced) inc('gateway_usage_unpriced_total', { model: model!.name, class: c });
    log('warn', 'upstream reported usage the price list has no price for', { requestId: input.requestId, model: model!.name, unpriced });
  }
  const steps: Adjustment[] = [];
  const step = (kind: Adjustment['kind'], detail: string, after: bigint) => {
    steps.push({ kind, detail, amount: after - priced });
    return after;
  };
  if (input.cacheHitBilledNano !== null)
    priced = step('response_cache', formatPico(input.cacheHitBilledNano * 1000n), hitCost(priced, input.cacheHitBilledNano));
  if (input.batchPercent !== undefined && model) {
    const percent = input.batchPercent;
    priced = step('batch_discount', String(percent), (priced * BigInt(Math.round((100 - percent) * 100))) / 10_000n);
  }
  const calls: CallLine[] = [];
  const tools = input.tools;
  if (tools && Object.keys(tools.reported).length > 0) {
    priced += tools.cost;
    for (const [tool, n] of Object.entries(tools.billed)) {
      const rate = model?.toolPrices[tool as keyof ToolCalls] ?? 0n;
      if (n) calls.push({ tool, calls: n, rate, cost: BigInt(n) * rate });
    }
    addNote({ toolCalls: tools.billed, toolCostUsd: formatPico(tools.cost) });
    if (BUILT_IN_TOOLS.some((t) => (tools.reported[t] ?? 0) > (tools.billed[t] ?? 0))) addNote({ toolCallsReported: tools.reported });
  }
  const cost = reserved !== null && priced > reserved ? reserved : priced;
  if (model && (reported !== usage.completionTokens || cost !== priced)) {
    inc('gateway_usage_capped_total', { model: model.name });
    const capped: BillingNote = { capped: true };
    if (reported !== usage.completionTokens) {
      capped.completionTokensReported = reported;
      capped.completionTokensBilled = usage.completionTokens;
    }
    if (cost !== priced) {
      capped.costUsdPriced = formatPico(priced);
      capped.costUsdBilled = formatPico(cost);
    }
    addNote(capped);
    log('warn', 'upstream usage beyond the reservation; charged the reservation', { requestId: input.requestId, model: model.name, ...capped });
  }
  if (breakdown && cost !== priced) step('reservation_cap', '', cost);
  const costCny = cost === 0n ? 0n : cnyOf(cost, input.cnyRateNano);
  return Object.freeze({
    usage,
    cost,
    costCny,
    costUsd: cost === 0n ? NO_CHARGE.costUsd : formatPico(cost),
    costCnyText: costCny === 0n ? NO_CHARGE.costCnyText : formatPico(costCny),
    unpriced,
    unpricedText: unpriced.join(', '),
    breakdown: breakdown ? storedBreakdown(breakdown, calls, steps) : null,
    note,
  });
}

/** The trailers a completed stream ends with: its cost, and the classes it reported without a price. */
export function costTrailers(charge: Charge): Record<string, string> {
  const trailers: Record<string, string> = { 'x-service-cost-usd': charge.costUsd, 'x-service-cost-cny': charge.costCnyText };
  if (charge.unpricedText) trailers[UNPRICED_HEADER] = charge.unpricedText;
  return trailers;
}
