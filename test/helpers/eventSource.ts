// An event source in the shape of VS Code's `Event<T>`, for host code that
// takes one: it fires on demand and counts the listeners still subscribed.

/** A listener's subscription, as VS Code's `Disposable`. */
export interface Disposal {
  dispose(): void;
}

export class EventSource<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** The event: subscribe a listener; the returned value unsubscribes it. */
  readonly event = (listener: (value: T) => void): Disposal => {
    const entry = (value: T): void => listener(value);
    this.listeners.add(entry);
    return { dispose: () => this.listeners.delete(entry) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }

  /** How many listeners are still subscribed. */
  get listenerCount(): number {
    return this.listeners.size;
  }
}
