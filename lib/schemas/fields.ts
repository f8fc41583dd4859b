import { z } from 'zod';
import { fieldError, type FieldError } from '@/lib/errors';
import { isMessageCode, renderMessage, type MessageCode, type MessageParams } from '@/lib/i18n/codes';

// zod's issues in the app's words: each bad field as a FieldError (a message code and its
// parameters, lib/i18n/codes.ts), so the API's 400 and a form's own check before it sends say the
// same thing, in the reader's language. Client-safe. Written here rather than taken from a library
// because the words must be message codes the pages already render (zod's locales would be a
// second, differently worded catalogue).

type Issue = z.core.$ZodIssue;
type Any = z.core.$ZodType;

interface Def {
  type: string;
  shape?: Record<string, Any>;
  innerType?: Any;
  in?: Any;
  element?: Any;
  valueType?: Any;
}

const def = (s: Any): Def => s._zod.def as unknown as Def;

/** The code a schema carries through `coded()`: its own metadata, or that of the schema it was cloned from (`.meta()` clones). */
function codeOf(schema: Any): { code: MessageCode; params?: MessageParams } | null {
  for (let s: Any | undefined = schema; s; s = (s._zod as { parent?: Any }).parent) {
    const meta = z.globalRegistry.get(s) as Record<string, unknown> | undefined;
    const code = meta?.['x-message-code'];
    if (isMessageCode(code)) return { code, params: meta?.['x-message-params'] as MessageParams | undefined };
  }
  return null;
}

/** The innermost `coded()` code along `path` from `root`: a field's own words beat its object's. */
function codeAt(root: Any, path: readonly PropertyKey[]): { code: MessageCode; params?: MessageParams } | null {
  let found: ReturnType<typeof codeOf> = null;
  let s: Any | undefined = root;
  let i = 0;
  while (s) {
    found = codeOf(s) ?? found;
    const d = def(s);
    if (d.innerType) s = d.innerType;
    else if (d.type === 'pipe') s = d.in;
    else if (i >= path.length) break;
    else if (d.type === 'object') s = d.shape?.[String(path[i++])];
    else if (d.type === 'array' || d.type === 'record') {
      s = d.type === 'array' ? d.element : d.valueType;
      i++;
    } else break;
  }
  return found;
}

function generic(issue: Issue, field: string): [MessageCode, MessageParams] {
  const i = issue as Issue & Record<string, unknown>;
  switch (issue.code) {
    case 'invalid_type':
      if (i.input === undefined) return ['field.required', { field }];
      return ['field.type', { field, expected: String(i.expected) }];
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const n = String(small ? i.minimum : i.maximum);
      if (i.origin === 'string') return small ? ['field.too_short', { field, min: n }] : ['field.too_long', { field, max: n }];
      if (i.origin === 'array' || i.origin === 'set') return small ? ['field.list_short', { field, min: n }] : ['field.list_long', { field, max: n }];
      return small ? ['field.min', { field, min: n }] : ['field.max', { field, max: n }];
    }
    case 'invalid_value':
      return ['field.one_of', { field, values: (i.values as unknown[]).map((v) => String(v)).join(', ') }];
    case 'invalid_format':
      return ['field.format', { field, format: String(i.format) }];
    case 'custom':
      // A refinement's own sentence (English, as the API says it; the Chinese page says the field is not valid).
      if (issue.message && issue.message !== 'Invalid input') return ['request.invalid_field', { field, detail: issue.message }];
      return ['field.not_valid', { field }];
    default:
      return ['field.not_valid', { field }];
  }
}

/** Every bad field of a failed parse, in the schema's order: a field named once, by its first issue. */
export function fieldErrorsOf(schema: z.ZodType, issues: readonly Issue[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const push = (fullPath: readonly PropertyKey[], issue: Issue) => {
    // An entry of a list is its list's error (`thresholds`, not `thresholds.0`): the form shows it by the list.
    const index = fullPath.findIndex((k) => typeof k === 'number');
    const path = index === -1 ? fullPath : fullPath.slice(0, index);
    const field = path.map(String).join('.') || 'body';
    if (seen.has(field)) return;
    seen.add(field);
    const own = codeAt(schema, path);
    if (issue.code === 'unrecognized_keys') out.push(fieldError(field, 'field.unknown', { field }));
    else if (own) out.push(fieldError(field, own.code, own.params));
    else out.push(fieldError(field, ...generic(issue, field)));
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') for (const key of issue.keys) push([...issue.path, key], issue);
    else push(issue.path, issue);
  }
  return out;
}

/**
 * A form's own check with the route's schema: null when the values pass, else each bad field's
 * error (field name -> FieldError), rendered by the page with renderMessage like the server's.
 */
export function checkForm(schema: z.ZodType, values: unknown): Record<string, FieldError> | null {
  const parsed = schema.safeParse(values);
  if (parsed.success) return null;
  return Object.fromEntries(fieldErrorsOf(schema, parsed.error.issues).map((f) => [f.field, f]));
}

/**
 * A form's check in the reader's language (`locale`): null when the values pass, else the summary
 * the server's 400 would give and each bad field's words, as useApiError reads them from a 400.
 */
export function formErrors(locale: string, schema: z.ZodType, values: unknown): { text: string; fields: Record<string, string> } | null {
  const bad = checkForm(schema, values);
  if (!bad) return null;
  const fields = Object.fromEntries(Object.entries(bad).map(([k, f]) => [k, renderMessage(locale, f)]));
  return { text: renderMessage(locale, { message_code: 'request.invalid_fields' }), fields };
}
