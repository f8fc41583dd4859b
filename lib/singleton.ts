// Next's route-handler bundle and the custom server bundle each carry their own copy of lib/.
// Process-wide state (database, limiter, caches, log queue) must be shared, so it lives on globalThis.
const store = globalThis as unknown as Record<symbol, unknown>;

const keys = new Map<string, symbol>();

export function singleton<T>(name: string, create: () => T): T {
  let key = keys.get(name);
  if (key === undefined) keys.set(name, (key = Symbol.for(`model-gateway.${name}`)));
  if (!(key in store)) store[key] = create();
  return store[key] as T;
}

export function resetSingleton(name: string): void {
  delete store[Symbol.for(`model-gateway.${name}`)];
}
