import type { ClientSignal } from '@/lib/gateway/types';

/**
 * A minimal abort signal (what undici and the pipeline use of one): fires its listeners once.
 * An AbortController costs an EventTarget per request; the lean path makes one of these instead.
 */
export class OnceSignal implements ClientSignal {
  aborted = false;
  private listeners: (() => void)[] | null = null;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const l of listeners) l();
  }
}

/** Fires when its parent (the client's signal) fires, or when aborted itself. */
export class LinkedSignal extends OnceSignal {
  constructor(parent: ClientSignal) {
    super();
    if (parent.aborted) this.aborted = true;
    else parent.addEventListener('abort', () => this.abort(), { once: true });
  }
}
