// The costly work a request may do before admission (counting tokens for service-auto, reading
// stored conversations and items; GET/DELETE of stored responses) runs before any of the
// account's limits apply: its rate, concurrency and balance are checked only at admission. So that
// one account cannot fill an instance with it (six 4 MiB prompts to service-auto at once, say), it
// is gated here, in process, per account: at most MAX_ACTIVE of an account's requests do such work
// at a time, the next wait their turn (in order), and past MAX_WAITING the request is refused at
// once. Each piece of that work is bounded too (tokens.ts, responses-store.ts), so a turn is short.
// The rest (validating a body, translating it: schema inlining has its own budget,
// gemini-schema.ts) is cheap and not gated, so that an ordinary burst reaches admission as it came.
import { GatewayError } from '@/lib/errors';
import type { ClientSignal } from '@/lib/gateway/types';

/** An account's requests doing pre-admission work at once, per instance. */
export const MAX_ACTIVE = 2;
/** An account's requests waiting for a turn, per instance, before the next is refused. */
export const MAX_WAITING = 256;

interface Gate {
  active: number;
  waiting: Array<() => void>;
}

const gates = new Map<string, Gate>();

/** Runs `work` in one of the account's turns; a client that leaves while waiting gives up its place. */
export async function preAdmission<T>(account: string, signal: ClientSignal, work: () => Promise<T>): Promise<T> {
  let gate = gates.get(account);
  if (!gate) gates.set(account, (gate = { active: 0, waiting: [] }));
  // A finished turn passes its place to the next waiting request as it is: no arrival in between takes it.
  if (gate.active >= MAX_ACTIVE) await waitTurn(gate, signal);
  else gate.active++;
  try {
    return await work();
  } finally {
    const next = gate.waiting.shift();
    if (next) next();
    else if (--gate.active === 0) gates.delete(account);
  }
}

function waitTurn(gate: Gate, signal: ClientSignal): Promise<void> {
  if (gate.waiting.length >= MAX_WAITING) {
    throw new GatewayError('rate_limit_exceeded', 'Too many requests of this account are being prepared at once on this instance. Please retry.', {
      retryAfterMs: 1000,
    });
  }
  return new Promise<void>((resolve, reject) => {
    const turn = () => {
      signal.removeEventListener('abort', leave);
      resolve();
    };
    const leave = () => {
      const at = gate.waiting.indexOf(turn);
      if (at >= 0) gate.waiting.splice(at, 1);
      reject(new Error('the client left while waiting for its turn'));
    };
    if (signal.aborted) return leave();
    signal.addEventListener('abort', leave, { once: true });
    gate.waiting.push(turn);
  });
}

/** Accounts with work under way or waiting (tests). */
export function gatedAccounts(): number {
  return gates.size;
}
