import { z } from 'zod';
import { GatewayError } from '@/lib/errors';
import { usdToPico } from '@/lib/money';
import { readJson } from '@/lib/http/api';

/** Reads a JSON body and validates it; a mismatch is a 400 naming the field. */
export async function readBody<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await readJson(req));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.') || null;
    throw new GatewayError('invalid_request', field ? `${field}: ${issue.message}` : issue.message, { param: field });
  }
  return parsed.data;
}

const decimal = /^-?\d{1,9}(\.\d{1,12})?$/;

/** A USD amount as a decimal string (or a JSON number, read through its shortest text), to pico-USD. */
export const usdAmount = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const text = typeof v === 'number' ? String(v) : v.trim();
  if (!decimal.test(text)) {
    ctx.addIssue({ code: 'custom', message: 'must be a decimal amount in USD with at most 12 decimals' });
    return z.NEVER;
  }
  return usdToPico(text.startsWith('-') ? text.slice(1) : text) * (text.startsWith('-') ? -1n : 1n);
});
