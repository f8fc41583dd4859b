// What a translator (or a surface) left out of, or degraded in, the request it sends upstream:
// the client sees the names in `x-service-dropped`, the request log keeps them on the attempt.
// A drop is allowed only where it cannot change what the model is asked (docs/protocols.md).

/** The response header that names what was dropped (comma-separated, present only when non-empty). */
export const DROPPED_HEADER = 'x-service-dropped';

/** Names of request fields, tools or items dropped for one upstream call; deduplicated, in the order first met. */
export class DropRecord {
  private names: Set<string> | null = null;

  add(name: string): this {
    (this.names ??= new Set()).add(name);
    return this;
  }

  /** The names, or undefined when nothing was dropped (what UpstreamCall.dropped takes). */
  list(): string[] | undefined {
    return this.names ? [...this.names] : undefined;
  }
}

/** Two lists of dropped names as one (deduplicated); undefined when both are empty. */
export function mergeDropped(a: readonly string[] | undefined, b: readonly string[] | undefined): readonly string[] | undefined {
  if (!a?.length) return b?.length ? b : undefined;
  if (!b?.length) return a;
  return [...new Set([...a, ...b])];
}

/** The header value of a list of dropped names (deduplicated), or undefined when there is none. */
export function droppedHeaderValue(names: readonly string[] | undefined): string | undefined {
  return names?.length ? [...new Set(names)].join(',') : undefined;
}
