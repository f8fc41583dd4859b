// Next's route-handler bundle and the custom server bundle each carry their own copy of lib/.
// Process-wide state (database, limiter, caches, log queue) must be shared, so it lives in one Map
// on globalThis, found once per bundle at load time (a plain Map lookup per call after that).
const STORE = Symbol.for('model-gateway.singletons');
const g = globalThis as unknown as Record<symbol, Map<string, unknown> | undefined>;
const store: Map<string, unknown> = (g[STORE] ??= new Map());

export function singleton<T>(name: string, create: () => T): T {
  let value = store.get(name);
  if (value === undefined && !store.has(name)) {
    value = create();
    store.set(name, value);
  }
  return value as T;
}

export function resetSingleton(name: string): void {
  store.delete(name);
}
