// One error type for every surface. Each surface serialises it in its own envelope:
// /v1 OpenAI-style, /v1/anthropic Anthropic-style, /v1/gemini Google-style, the dashboard API as
// {error: {code, message}} -- plus, where the message has one, its `message_code` and `params`
// (lib/i18n/codes.ts) for the pages to say it in the reader's language, and `fields` naming every
// bad field of a form.

import { englishMessage, ruleCode, type MessageCode, type MessageParams } from '@/lib/i18n/codes';

/** One bad field of a request body, in words a form shows next to the field. */
export interface FieldError {
  field: string;
  message: string;
  message_code: MessageCode;
  params?: MessageParams;
}

export type ErrorCode =
  | 'invalid_request'
  | 'invalid_json'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'model_not_found'
  | 'not_found'
  | 'invalid_api_key'
  | 'unauthenticated'
  | 'insufficient_balance'
  | 'account_suspended'
  | 'model_not_allowed'
  | 'key_expired'
  | 'ip_not_allowed'
  | 'key_budget_exceeded'
  | 'forbidden'
  | 'conflict'
  | 'rate_limit_exceeded'
  | 'internal_error'
  | 'upstream_error'
  | 'all_channels_failed'
  | 'maintenance'
  | 'unavailable'
  | 'payments_not_configured'
  | 'region_not_allowed'
  | 'region_unavailable';

interface CodeInfo {
  status: number;
  openaiType: string;
  anthropicType: string;
  /** A retry of the same request cannot succeed: tell SDKs not to retry. */
  final: boolean;
}

const codes: Record<ErrorCode, CodeInfo> = {
  invalid_request: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error', final: true },
  invalid_json: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error', final: true },
  body_too_large: { status: 413, openaiType: 'invalid_request_error', anthropicType: 'request_too_large', final: true },
  unsupported_media_type: { status: 415, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error', final: true },
  model_not_found: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'not_found_error', final: true },
  not_found: { status: 404, openaiType: 'invalid_request_error', anthropicType: 'not_found_error', final: true },
  invalid_api_key: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error', final: true },
  unauthenticated: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error', final: true },
  insufficient_balance: { status: 402, openaiType: 'insufficient_balance', anthropicType: 'billing_error', final: true },
  account_suspended: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error', final: true },
  model_not_allowed: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error', final: true },
  key_expired: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error', final: true },
  ip_not_allowed: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error', final: true },
  key_budget_exceeded: { status: 402, openaiType: 'insufficient_balance', anthropicType: 'billing_error', final: true },
  forbidden: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error', final: true },
  conflict: { status: 409, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error', final: true },
  rate_limit_exceeded: { status: 429, openaiType: 'rate_limit', anthropicType: 'rate_limit_error', final: false },
  internal_error: { status: 500, openaiType: 'server_error', anthropicType: 'api_error', final: false },
  upstream_error: { status: 502, openaiType: 'upstream_error', anthropicType: 'api_error', final: false },
  all_channels_failed: { status: 502, openaiType: 'upstream_error', anthropicType: 'api_error', final: false },
  maintenance: { status: 503, openaiType: 'service_unavailable', anthropicType: 'overloaded_error', final: false },
  unavailable: { status: 503, openaiType: 'service_unavailable', anthropicType: 'overloaded_error', final: false },
  payments_not_configured: { status: 503, openaiType: 'service_unavailable', anthropicType: 'api_error', final: true },
  region_not_allowed: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error', final: true },
  // Retrying may find an in-region channel back (a failed one recovers): not final.
  region_unavailable: { status: 503, openaiType: 'service_unavailable', anthropicType: 'overloaded_error', final: false },
};

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | null;
  /** Seconds, for 429/503. */
  readonly retryAfterS?: number;
  readonly retryAfterMs?: number;
  /** Extra response headers (e.g. an upstream's 4xx passed through). */
  readonly headers?: Record<string, string>;
  /** The message's code and parameters (lib/i18n/codes.ts), for the dashboard API. */
  readonly messageCode?: MessageCode;
  readonly params?: MessageParams;
  /** Every bad field of a form body (the dashboard API). */
  readonly fields?: FieldError[];

  constructor(
    code: ErrorCode,
    message: string,
    opts: {
      param?: string | null;
      retryAfterMs?: number;
      status?: number;
      headers?: Record<string, string>;
      messageCode?: MessageCode;
      params?: MessageParams;
      fields?: FieldError[];
    } = {},
  ) {
    super(message);
    this.code = code;
    this.messageCode = opts.messageCode;
    this.params = opts.params;
    this.fields = opts.fields;
    this.status = opts.status ?? codes[code].status;
    this.param = opts.param ?? null;
    if (opts.retryAfterMs !== undefined) {
      this.retryAfterMs = opts.retryAfterMs;
      this.retryAfterS = Math.max(1, Math.ceil(opts.retryAfterMs / 1000));
    }
    this.headers = opts.headers;
  }

  get final(): boolean {
    return codes[this.code].final;
  }
}

/** An error whose message is a coded one: the English `message` is the code's English template. */
export function codedError(
  code: ErrorCode,
  messageCode: MessageCode,
  params?: MessageParams,
  opts: { param?: string | null; retryAfterMs?: number; headers?: Record<string, string>; fields?: FieldError[] } = {},
): GatewayError {
  return new GatewayError(code, englishMessage(messageCode, params), { ...opts, messageCode, params });
}

/** A 400 for a sign-up rule's refusal (email shape, password length or commonness), coded when known. */
export function ruleError(problem: string, param: string): GatewayError {
  const coded = ruleCode(problem);
  return new GatewayError('invalid_request', problem, { param, messageCode: coded?.code, params: coded?.params });
}

/** A field error in words: its English text from the code. */
export function fieldError(field: string, messageCode: MessageCode, params?: MessageParams): FieldError {
  return params
    ? { field, message: englishMessage(messageCode, params), message_code: messageCode, params }
    : { field, message: englishMessage(messageCode), message_code: messageCode };
}

/** Anything thrown that is not a GatewayError is internal: its details stay in the log. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('internal_error', 'Internal error. The request id identifies it in our logs.');
}

export function errorHeaders(err: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { ...err.headers };
  if (err.retryAfterS !== undefined) {
    headers['retry-after'] = String(err.retryAfterS);
    headers['retry-after-ms'] = String(err.retryAfterMs);
  }
  if (err.final) headers['x-should-retry'] = 'false';
  return headers;
}

export function openaiErrorBody(err: GatewayError): string {
  return JSON.stringify({ error: { message: err.message, type: codes[err.code].openaiType, param: err.param, code: err.code } });
}

export function anthropicErrorBody(err: GatewayError): string {
  // Upstream statuses we pass through keep their own Anthropic type.
  const type = err.status === 529 ? 'overloaded_error' : codes[err.code].anthropicType;
  return JSON.stringify({ type: 'error', error: { type, message: err.message } });
}

export interface ApiErrorBody {
  error: { code: ErrorCode; message: string; param?: string; message_code?: MessageCode; params?: MessageParams; fields?: FieldError[] };
}

export function apiErrorBody(err: GatewayError): ApiErrorBody {
  // `param` names the offending field of a 400, where there is one; `message_code` and `params`
  // let the pages say the message in the reader's language; `fields` lists every bad field.
  const error: ApiErrorBody['error'] = { code: err.code, message: err.message };
  if (err.param) error.param = err.param;
  if (err.messageCode) {
    error.message_code = err.messageCode;
    error.params = err.params ?? {};
  }
  if (err.fields?.length) error.fields = err.fields;
  return { error };
}

/**
 * Google's canonical status name for an HTTP status (what google-genai and Gemini CLI read from
 * `error.status`). The gateway's own statuses Google never sends keep their number with the
 * nearest name: 402 (balance) is FAILED_PRECONDITION, not RESOURCE_EXHAUSTED, so that clients
 * do not retry it as a quota.
 */
export function googleStatus(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
      return 'FAILED_PRECONDITION';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'UNIMPLEMENTED';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
    case 529:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
  }
}

export function googleErrorBody(status: number, message: string): string {
  return JSON.stringify({ error: { code: status, message, status: googleStatus(status) } });
}

export function geminiErrorBody(err: GatewayError): string {
  return googleErrorBody(err.status, err.message);
}
