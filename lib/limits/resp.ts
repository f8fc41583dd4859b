// The Redis protocol (RESP) encoding of the limiter's commands, and how they are sent.
import { Command, type Cluster, type Redis } from 'ioredis';

type RedisClient = Redis | Cluster;

export type Arg = string | number;

/** RESP bulk strings; with `utf8` false, lengths in UTF-16 units (exact for ASCII text only). */
function bulkStrings(args: readonly Arg[], utf8: boolean): string {
  let out = '';
  for (const a of args) {
    const s = typeof a === 'string' ? a : String(a);
    out += `$${utf8 ? Buffer.byteLength(s) : s.length}\r\n${s}\r\n`;
  }
  return out;
}

/**
 * One command in the Redis protocol, its arguments given as segments (a rule list's keys, an item's
 * arguments) so that nothing is copied into one long array first. Lengths are counted as for ASCII
 * and the whole command checked once (its UTF-8 length equals its length exactly when it is all
 * ASCII); otherwise it is framed again with each argument's UTF-8 length.
 */
export function encodeCommand(name: string, segments: readonly (readonly Arg[])[]): string {
  let n = 1;
  for (const seg of segments) n += seg.length;
  const encode = (utf8: boolean) => {
    let out = `*${n}\r\n$${name.length}\r\n${name}\r\n`;
    for (const seg of segments) out += bulkStrings(seg, utf8);
    return out;
  };
  const wire = encode(false);
  return Buffer.byteLength(wire) === wire.length ? wire : encode(true);
}

/**
 * A command encoded once by encodeCommand and written as it is. ioredis's generic Command copies its
 * arguments (Array#flat) and frames each one again when written: for a batch of ten admissions
 * (~370 arguments) about three times the JavaScript of encoding it once
 * (docs/decisions/004-one-limiter-call-per-turn.md). (ioredis's own script commands
 * override toWritable the same way.)
 */
class EncodedCommand extends Command {
  private readonly wire: string;
  private readonly routeKey: string | undefined;

  /** routeKey: a key of the command, by whose slot a Cluster client sends it (its arguments are not parsed). */
  constructor(name: string, segments: readonly (readonly Arg[])[], routeKey?: string) {
    super(name, [], { replyEncoding: 'utf8' });
    this.wire = encodeCommand(name, segments);
    this.routeKey = routeKey;
  }

  override getKeys(): Array<string | Buffer> {
    return this.routeKey === undefined ? [] : [this.routeKey];
  }

  override toWritable(): string {
    return this.wire;
  }

  /**
   * The client's commandTimeout, tolerant of a busy event loop. Timers run before the loop reads its
   * sockets, so after a long synchronous stretch (a burst of requests on a slow machine) ioredis
   * declares a command timed out whose reply has already arrived: the failover limiter then falls
   * back to in-process for a Redis that answered in time, and the admission Redis did make (a lease,
   * a reservation) is never released there. When the timer fires, one turn of the loop reads what
   * has arrived before the verdict. (The timer is ioredis's own field, which it clears on settling.)
   */
  override setTimeout(ms: number): void {
    const timers = this as unknown as { _commandTimeoutTimer?: NodeJS.Timeout };
    if (timers._commandTimeoutTimer) return;
    timers._commandTimeoutTimer = setTimeout(() => {
      setImmediate(() => {
        if (!this.isResolved) this.reject(new Error('Command timed out'));
      });
    }, ms);
  }
}

/** Sends one command encoded by the limiter (EncodedCommand): every limiter command goes this way. */
export function sendEncoded(redis: RedisClient, name: string, segments: readonly (readonly Arg[])[], routeKey?: string): Promise<unknown> {
  const command = new EncodedCommand(name, segments, routeKey);
  redis.sendCommand(command);
  return command.promise;
}
