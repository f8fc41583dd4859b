/** One request-log row as the dashboard shows it (money in bigint pico units). */
export interface LogEntry {
  id: string;
  createdAt: Date;
  apiKeyId: string | null;
  endpoint: string;
  modelRequested: string | null;
  modelServed: string | null;
  channel: string | null;
  status: number;
  outcome: string;
  errorCode: string | null;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  tokensEstimated: boolean;
  costUsd: bigint;
  costCny: bigint;
  /** CNY per USD at the time of the request, exact decimal text. */
  cnyRate: string;
  latencyMs: number;
  firstTokenMs: number | null;
  routeReason: string | null;
}
