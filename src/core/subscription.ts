/**
 * What listening to a core event returns: `dispose` stops it. VS Code's
 * `Disposable` has this shape, so the host registers it with its own
 * (docs/architecture.md, "Subscriptions").
 */
export interface Subscription {
  dispose(): void;
}

/** The listeners of one event: each `add` returns its own subscription. */
export class Listeners<T> {
  private readonly live = new Set<(value: T) => void>();

  add(listener: (value: T) => void): Subscription {
    // A wrapper per call: the same function added twice is two subscriptions.
    const entry = (value: T): void => listener(value);
    this.live.add(entry);
    return { dispose: () => this.live.delete(entry) };
  }

  /** Tells every listener, in the order they were added. */
  emit(value: T): void {
    for (const listener of this.live) listener(value);
  }

  clear(): void {
    this.live.clear();
  }
}
